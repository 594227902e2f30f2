// What both Embind modules (bindings.cpp: the engine; tokenizer_bindings.cpp: the tokenizer alone)
// need at the boundary: C++ errors as the JS API's error classes, and arrays and text across.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "glassbox/error.h"

namespace glassbox::js {

using emscripten::val;

// Runs f; a C++ exception becomes the JS error of its kind, with the library's message (a rejected
// promise once it reaches the async API). The JS error is thrown after the C++ exception is done
// with, outside any catch block and past no C++ object that needs freeing, so nothing is left
// behind whether or not a JS throw runs C++ cleanups on its way out (Emscripten's JS-based
// exceptions ran none). Hence the message's copy in a fixed buffer (long messages are cut).
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  static char message[4096];
  const char* name;
  auto keep = [](const char* what) {
    std::strncpy(message, what, sizeof message - 1);
    message[sizeof message - 1] = '\0';
  };
  try {
    return f();
  } catch (const ModelFormatError& e) {
    name = "ModelFormatError";
    keep(e.what());
  } catch (const InvalidArgument& e) {
    name = "InvalidArgumentError";
    keep(e.what());
  } catch (const std::bad_alloc&) {
    name = "OutOfMemoryError";
    keep("out of WebAssembly memory (a thread's heap holds at most 4 GB)");
  } catch (const std::exception& e) {
    name = "GlassboxError";
    keep(e.what());
  }
  val::module_property("errors")[name].new_(val(static_cast<const char*>(message))).throw_();
}

inline std::vector<std::int32_t> ids_from_js(const val& array) {
  return emscripten::convertJSArrayToNumberVector<std::int32_t>(array);
}

template <typename T>
val typed_array_copy(const char* type, const T* data, std::size_t n) {
  return val::global(type).new_(val(emscripten::typed_memory_view(n, data)));
}

// A JS string of UTF-8 text, decoded with its byte order mark kept: Embind's own std::string
// conversion decodes long strings with a TextDecoder that drops a leading U+FEFF.
inline val js_text(const std::string& utf8) {
  static const val decoder = [] {
    val options = val::object();
    options.set("ignoreBOM", true);
    return val::global("TextDecoder").new_(std::string("utf-8"), options);
  }();
  // A copy: TextDecoder refuses views of the threaded module's shared memory.
  return decoder.call<val>(
      "decode", typed_array_copy("Uint8Array", reinterpret_cast<const std::uint8_t*>(utf8.data()), utf8.size()));
}

}   // namespace glassbox::js
