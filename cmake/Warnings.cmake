# Warnings for the project's own code only (not for LibTorch / OpenCV headers, which
# are included as system headers by their imported targets).
function(attnlab_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                           -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
                           -Wnull-dereference -Wdouble-promotion -Wformat=2)
    # A precompiled header GCC cannot use (flags differ from the target that built it) is
    # silently parsed as text again: say so (cmake/BuildSpeed.cmake shares one PCH).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Winvalid-pch)
    endif()
  endif()
endfunction()
