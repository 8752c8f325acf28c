# Run by `cmake -P` after a test binary is built (cmake/GTestSuites.cmake): lists its
# GoogleTest suites and writes the ctest entries, one per suite, to OUT.
# Inputs: EXE (the binary), OUT, SETTINGS (SUITE_COSTS, SUITE_PROPERTIES), WORKDIR.
include("${SETTINGS}")
# 120 s: a loaded machine took over 5 s to start a LibTorch binary; a build must not fail
# on a wall clock.
execute_process(COMMAND "${EXE}" --gtest_list_tests WORKING_DIRECTORY "${WORKDIR}"
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "listing the tests of ${EXE} failed (${rc}):\n${listing}\n${errors}")
endif()

# Lines: "Suite." (maybe followed by "  # TypeParam = ..."), then "  Test" lines.
string(REPLACE ";" "," listing "${listing}")  # a parameter's comment may hold ';'
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
set(suite "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    if(suite MATCHES "(^|/)DISABLED_")
      set(suite "")  # GoogleTest does not run it
    endif()
  elseif(suite AND line MATCHES "^  ([^ ]+)" AND NOT CMAKE_MATCH_1 MATCHES "^DISABLED_")
    if(NOT DEFINED count_${suite})
      list(APPEND suites "${suite}")
      set(count_${suite} 0)
    endif()
    math(EXPR count_${suite} "${count_${suite}} + 1")
  endif()
endforeach()

set(cost_pairs ${SUITE_COSTS})
set(text "# Written by cmake/gtest_suites_list.cmake from ${EXE} --gtest_list_tests\n")
foreach(suite IN LISTS suites)
  set(cost ${count_${suite}})
  list(FIND cost_pairs "${suite}" at)
  if(at GREATER_EQUAL 0)
    math(EXPR at "${at} + 1")
    list(GET cost_pairs ${at} cost)
  endif()
  string(APPEND text
    "add_test([==[${suite}]==] [==[${EXE}]==] [==[--gtest_filter=${suite}.*]==])\n"
    "set_tests_properties([==[${suite}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKDIR}]==]"
    " TIMEOUT 3600 SKIP_RETURN_CODE 77 COST ${cost} ${SUITE_PROPERTIES})\n")
endforeach()
# Written whole and then renamed: an interrupted build leaves the old list, not half a new one.
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
