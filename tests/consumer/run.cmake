# ctest driver for the two ways a C++ developer takes glassbox into a CMake project, then runs the
# program on a fixture model (it prints 4 greedy ids):
#   MODE installed     install the built library into a temporary prefix and build
#                      tests/consumer/installed against it with find_package(glassbox)
#   MODE subdirectory  build tests/consumer/subdirectory, which add_subdirectory()s the sources,
#                      with CLI11, Eigen, GoogleTest and Google Benchmark made unfindable; with
#                      no build type (no optimisation), as what is tested is the build's wiring:
#                      it compiles 4x faster, and every other test runs the optimised code
set(configure "${CMAKE_COMMAND};-S;${SOURCE_DIR}/tests/consumer/${MODE};-B;${WORK_DIR}/build;-G;Ninja;-DCMAKE_CXX_COMPILER=${CXX};-DCMAKE_CXX_FLAGS=${CXX_FLAGS};-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
# Each step is a command line in a variable of its own (a list of lists would flatten).
if(MODE STREQUAL "installed")
  set(install "${CMAKE_COMMAND};--install;${BUILD_DIR};--prefix;${WORK_DIR}/prefix")
  set(configure "${configure};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
  set(steps install configure build run)
elseif(MODE STREQUAL "subdirectory")
  file(REMOVE_RECURSE ${WORK_DIR}/build)
  set(configure "${configure};-DCMAKE_BUILD_TYPE=;-DGLASSBOX_SOURCE_DIR=${SOURCE_DIR};-DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON;-DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON;-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON;-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON")
  set(steps configure build run)
else()
  message(FATAL_ERROR "MODE must be installed or subdirectory, got '${MODE}'")
endif()
set(build "${CMAKE_COMMAND};--build;${WORK_DIR}/build")
set(run "${WORK_DIR}/build/consumer;${SOURCE_DIR}/tests/fixtures/gpt2-f32")
foreach(name ${steps})
  set(step ${${name}})
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${step}\n${out}")
  endif()
endforeach()
message("consumer printed:\n${out}")
