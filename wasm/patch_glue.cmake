# Makes the glue fit bundlers. First, the threaded glue starts its threads' workers as module
# workers: Emscripten 3.1.6 writes `new Worker(new URL("glassbox-core-mt.worker.js",
# import.meta.url))`, a classic worker, which bundlers can only build as one file in their "iife"
# format (Vite refuses it next to ES module workers). glassbox-core-mt.worker.js loads the glue with
# import(), so it runs as a module worker as it is. Fails the build if the glue does not read as
# expected. cmake -DDIST=<web/dist> -P patch_glue.cmake
set(glue ${DIST}/glassbox-core-mt.mjs)
file(READ ${glue} text)
set(classic "new Worker(new URL(\"glassbox-core-mt.worker.js\",import.meta.url))")
set(module "new Worker(new URL(\"glassbox-core-mt.worker.js\",import.meta.url),{type:\"module\"})")
string(FIND "${text}" "${module}" done)
if(done EQUAL -1)
  string(FIND "${text}" "${classic}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${glue}: no `${classic}` to make a module worker (a new Emscripten?)")
  endif()
  string(REPLACE "${classic}" "${module}" text "${text}")
  file(WRITE ${glue} "${text}")
endif()

# Every glue: its `var _scriptDir = import.meta.url` serves only the glue's own locating of files,
# which glassbox does not use (wasm-module.mjs instantiates the .wasm; the .wasm and the threads'
# worker script are found by `new URL("...", import.meta.url)`, which bundlers rewrite). A bare
# import.meta.url is what webpack replaces with the file: path the module had on the machine that
# built the bundle: it would end up in the bundle.
foreach(name glassbox-core glassbox-core-mt glassbox-tokenizer glassbox-training glassbox-chat)
  set(glue ${DIST}/${name}.mjs)
  file(READ ${glue} text)
  string(FIND "${text}" "var _scriptDir = import.meta.url;" at)
  if(NOT at EQUAL -1)
    string(REPLACE "var _scriptDir = import.meta.url;" "var _scriptDir = undefined;" text "${text}")
    file(WRITE ${glue} "${text}")
  else()
    string(FIND "${text}" "var _scriptDir = undefined;" done)
    if(done EQUAL -1)
      message(FATAL_ERROR "${glue}: no `var _scriptDir = import.meta.url;` (a new Emscripten?)")
    endif()
  endif()
endforeach()
