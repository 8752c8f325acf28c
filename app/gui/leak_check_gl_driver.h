// Keeps the OpenGL driver mapped until exit in AddressSanitizer builds, so LeakSanitizer's
// check at exit sees the driver's globals. Mesa's GLX loads its DRI driver (under Xvfb,
// swrast_dri.so) with dlopen and unloads it when GLFW closes the display; the driver's
// own caches then look leaked, because the only pointers to them lived in the unmapped
// library (240 bytes in 3 allocations with frames naming no module, in every GUI process).
// Marking the driver RTLD_NODELETE keeps those pointers visible, so the check still reports
// any memory this program loses. In other builds this does nothing.
#pragma once

namespace attnlab::gui {

// Call once a GL context is current (the driver is loaded by then).
void keep_gl_driver_loaded_for_leak_check();

}  // namespace attnlab::gui
