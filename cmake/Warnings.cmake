# Warnings for the project's own code only (not for LibTorch / OpenCV headers, which
# are included as system headers by their imported targets).
function(attnlab_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                           -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
                           -Wdouble-promotion -Wformat=2)
    # GCC's -Wnull-dereference follows the paths its inliner creates: in a unity batch
    # (cmake/BuildSpeed.cmake) it inlines across files and reports paths inside libstdc++'s
    # and nlohmann/json's headers (a vector's size, json::value()'s string) that no file
    # alone produced. So it is on for files compiled alone, and with Clang always
    # (scripts/sanitize.sh builds with clang).
    target_compile_options(${target} PRIVATE
      $<IF:$<AND:$<CXX_COMPILER_ID:GNU>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>,,-Wnull-dereference>)
    # A precompiled header GCC cannot use (flags differ from the target that built it) is
    # silently parsed as text again: say so (cmake/BuildSpeed.cmake shares one PCH).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Winvalid-pch)
    endif()
  endif()
endfunction()
