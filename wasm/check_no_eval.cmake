# Fails the build if a file of web/dist makes code from strings (new Function, eval): the engine
# must run under a Content-Security-Policy without 'unsafe-eval' (wasm/CMakeLists.txt,
# -sDYNAMIC_EXECUTION=0). cmake -DDIST=<web/dist> -P check_no_eval.cmake
file(GLOB files ${DIST}/*.mjs ${DIST}/*.js)
foreach(f ${files})
  file(READ ${f} text)
  string(REGEX MATCH "new Function|new_\\(Function|[^A-Za-z_.]eval\\(|[^A-Za-z_.]Function\\(\"" found "${text}")
  if(found)
    message(FATAL_ERROR "${f} makes code from a string (\"${found}\"): it would need 'unsafe-eval' in a CSP")
  endif()
endforeach()
