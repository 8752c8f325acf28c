# attnlab_gtest_suites(target [COSTS suite seconds ...] [PROPERTIES prop value ...])
#
# Registers a GoogleTest binary with ctest as one entry per test suite (`Suite`, run as
# `--gtest_filter=Suite.*`), not one per test case. Every entry is a process, and a
# process that loads LibTorch spends ~0.6 s registering its operators before the first
# test: with ~1000 cases that was ~10 min of a fresh clone's ctest on two cores, with
# ~200 suites it is ~2. The suites are listed after each build (the binary's
# --gtest_list_tests, by cmake/gtest_suites_list.cmake), like CMake's gtest_discover_tests.
#
# COST: ctest starts the costliest entries first when it has no timings of its own (a
# fresh clone), so the long suites run beside the many short ones instead of after them.
# A suite's cost is its number of tests unless COSTS names it (its seconds on the 2-core VM).
# TIMEOUT 3600 per suite is a safety net, not a limit a test is meant to meet; a suite
# whose tests were all skipped exits 77 (tests/support/gtest_exit.h), which ctest shows
# as skipped.
set(_attnlab_gtest_suites_script "${CMAKE_CURRENT_LIST_DIR}/gtest_suites_list.cmake")

function(attnlab_gtest_suites target)
  cmake_parse_arguments(ARG "" "" "COSTS;PROPERTIES" ${ARGN})
  set(dir "${CMAKE_CURRENT_BINARY_DIR}")
  set(listed "${dir}/${target}_suites.cmake")
  set(settings "${dir}/${target}_suites_settings.cmake")
  set(include_file "${dir}/${target}_suites_include.cmake")
  # The settings the list script reads: written at configure time, as CMake code.
  file(WRITE "${settings}"
       "set(SUITE_COSTS [==[${ARG_COSTS}]==])\nset(SUITE_PROPERTIES [==[${ARG_PROPERTIES}]==])\n")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -D "EXE=$<TARGET_FILE:${target}>" -D "OUT=${listed}"
            -D "SETTINGS=${settings}" -D "WORKDIR=${dir}" -P "${_attnlab_gtest_suites_script}"
    BYPRODUCTS "${listed}"
    VERBATIM)
  # Read by ctest: the list, or one failing entry that says the binary was not built.
  file(WRITE "${include_file}"
       "if(EXISTS [==[${listed}]==])\n  include([==[${listed}]==])\nelse()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
