# Script mode, run after the WebAssembly test executable is built: one ctest test per GoogleTest
# suite (--gtest_filter=Suite.*) instead of one per test. Each test is a process that starts Node
# and compiles the whole module (a fifth of a second before any test runs), so hundreds of
# one-test processes cost minutes that a process per suite does not.
#   cmake -DEMULATOR=node|--no-experimental-fetch -DEXECUTABLE=... -DWORKING_DIRECTORY=... -DOUT=... -P GtestSuites.cmake
string(REPLACE "|" ";" emulator "${EMULATOR}")
execute_process(COMMAND ${emulator} ${EXECUTABLE} --gtest_list_tests
                WORKING_DIRECTORY ${WORKING_DIRECTORY}
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "listing the tests of ${EXECUTABLE} failed (${rc}):\n${listing}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(line IN LISTS lines)
  # A suite's line ends with "." (a parameterized one is followed by a comment): "Fixtures/ExperimentTest."
  if(line MATCHES "^([^ #][^ ]*)\\.")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script
           "add_test([=[${suite}.*]=] ${emulator} ${EXECUTABLE} [==[--gtest_filter=${suite}.*]==])\n"
           "set_tests_properties([=[${suite}.*]=] PROPERTIES WORKING_DIRECTORY ${WORKING_DIRECTORY})\n")
  endif()
endforeach()
string(REPLACE ";" " " script "${script}")
file(WRITE ${OUT} "${script}")
