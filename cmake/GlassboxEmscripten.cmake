# Settings for the WebAssembly build (Emscripten toolchain: the `wasm` preset, or emcmake).
# Included by the top-level CMakeLists.txt when EMSCRIPTEN is set.

# Every target: WASM SIMD128 (the kernels' vector extensions become SIMD128 instructions), and real
# C++ exceptions (Emscripten's default is -fignore-exceptions, which would turn every library error
# into an abort). Both are needed at compile AND link time. The exceptions are WebAssembly's own
# (-fwasm-exceptions: Chrome 95, Firefox 100, Safari 15.2, Node 17 and later), not Emscripten's
# JS-based ones (-fexceptions), which route every call that may throw through a JS trampoline:
# those made each module larger (docs/performance.md) and every such call slower.
add_compile_options(-msimd128 -fwasm-exceptions)
add_link_options(-msimd128 -fwasm-exceptions)

# Header-only Debian packages (nlohmann-json) live in /usr, outside the Emscripten sysroot
# where the toolchain confines find_package. Their CMake configs are architecture-independent
# (/usr/share/...), and CMAKE_LIBRARY_ARCHITECTURE is wasm32-emscripten, so letting find_package
# look outside the sysroot cannot pick up a host (x86) library.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_package(nlohmann_json 3.10 REQUIRED)

# nlohmann_json's target puts /usr/include itself on the include path: there the host's glibc
# headers (stdio.h, wchar.h, ...) would shadow the sysroot's and break libc++. Give each package an
# include directory of its own in the build tree holding only links to its headers.
function(glassbox_own_include_dir target)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  string(MAKE_C_IDENTIFIER ${target} name)
  set(own ${PROJECT_BINARY_DIR}/host-include/${name})
  file(MAKE_DIRECTORY ${own})
  foreach(entry ${ARGN})
    set(found "")
    foreach(dir ${dirs})
      if(EXISTS ${dir}/${entry})
        set(found ${dir}/${entry})
        break()
      endif()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "${target}: ${entry} not found in ${dirs}")
    endif()
    file(CREATE_LINK ${found} ${own}/${entry} SYMBOLIC)
  endforeach()
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${own})
endfunction()
glassbox_own_include_dir(nlohmann_json::nlohmann_json nlohmann)

# ctest and gtest_discover_tests run the test .js under Node. emcmake's default emulator passes
# --experimental-wasm-threads, which Node 20 rejects; and Node >= 18 has a global fetch, which the
# 3.1.6 glue then uses on the .wasm's file path and fails: --no-experimental-fetch (where Node
# knows the option) makes it read the file instead.
find_program(GLASSBOX_NODE NAMES node nodejs REQUIRED)
execute_process(COMMAND ${GLASSBOX_NODE} --no-experimental-fetch -e ""
                RESULT_VARIABLE no_fetch_rc OUTPUT_QUIET ERROR_QUIET)
if(no_fetch_rc EQUAL 0)
  set(GLASSBOX_NODE_EMULATOR ${GLASSBOX_NODE} --no-experimental-fetch)
else()
  set(GLASSBOX_NODE_EMULATOR ${GLASSBOX_NODE})
endif()
# Shadows the cache entry emcmake or the toolchain file set, for every executable defined below.
set(CMAKE_CROSSCOMPILING_EMULATOR ${GLASSBOX_NODE_EMULATOR})
