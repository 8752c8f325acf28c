// See leak_check_gl_driver.h: only AddressSanitizer builds mark the DRI driver as
// never-unloaded; every other build compiles an empty function.
#include "app/gui/leak_check_gl_driver.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLAB_ASAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTNLAB_ASAN_BUILD 1
#endif

#if defined(ATTNLAB_ASAN_BUILD) && defined(__linux__)
#include <dlfcn.h>
#include <link.h>

#include <cstring>
#endif

namespace attnlab::gui {

#if defined(ATTNLAB_ASAN_BUILD) && defined(__linux__)
namespace {

// Mesa's DRI drivers live in a ".../dri/" folder and are named "<driver>_dri.so".
bool is_dri_driver(const char* path) {
  const std::size_t length = std::strlen(path);
  const char suffix[] = "_dri.so";
  const std::size_t suffix_length = sizeof(suffix) - 1;
  return std::strstr(path, "/dri/") != nullptr && length > suffix_length &&
         std::strcmp(path + length - suffix_length, suffix) == 0;
}

int pin_if_dri_driver(dl_phdr_info* info, std::size_t, void*) {
  if (info->dlpi_name != nullptr && is_dri_driver(info->dlpi_name)) {
    // RTLD_NOLOAD: only a library already loaded; RTLD_NODELETE: never unmap it. The
    // handle is dropped on purpose: the extra reference is what keeps it.
    dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
  return 0;
}

}  // namespace

void keep_gl_driver_loaded_for_leak_check() {
  dl_iterate_phdr(pin_if_dri_driver, nullptr);
}
#else
void keep_gl_driver_loaded_for_leak_check() {}
#endif

}  // namespace attnlab::gui
