# ATTNLAB_SANITIZE: instrument the project's own code (scripts/sanitize.sh builds with it,
# with clang, into its own folder).
#   address  AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer)
#   thread   ThreadSanitizer
# LibTorch, OpenCV, OpenBLAS and Mesa stay uninstrumented Debian libraries: ASan still
# sees every heap access our code makes into their buffers (their allocations go through
# the intercepted malloc); TSan cannot see their internal synchronisation, which is why
# tsan runs only the tests of our own threads (docs/RELIABILITY.md).
set(ATTNLAB_SANITIZE "" CACHE STRING "Build with a sanitizer: address (ASan+UBSan) or thread (TSan)")
if(ATTNLAB_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(ATTNLAB_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT ATTNLAB_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ATTNLAB_SANITIZE must be address, thread or empty, not '${ATTNLAB_SANITIZE}'")
endif()
