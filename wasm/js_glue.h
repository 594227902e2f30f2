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

template <typename T>
val typed_array_copy(const char* type, const T* data, std::size_t n) {
  return val::global(type).new_(val(emscripten::typed_memory_view(n, data)));
}

// A JS string of UTF-8 text, decoded with its byte order mark kept: Embind's own std::string
// conversion decodes long strings with a TextDecoder that drops a leading U+FEFF.
inline val js_text(const char* utf8, std::size_t size) {
  static const val decoder = [] {
    val options = val::object();
    options.set("ignoreBOM", true);
    return val::global("TextDecoder").new_(std::string("utf-8"), options);
  }();
  // A copy: TextDecoder refuses views of the threaded module's shared memory.
  return decoder.call<val>("decode", typed_array_copy("Uint8Array", reinterpret_cast<const std::uint8_t*>(utf8), size));
}
inline val js_text(const std::string& utf8) { return js_text(utf8.data(), utf8.size()); }

// Runs f; a C++ exception becomes the JS error of its kind, with the library's message (a rejected
// promise once it reaches the async API), decoded as the UTF-8 it is (a name like "lläma" in it
// stays one). The JS error is thrown after the C++ exception is done
// with, outside any catch block and past no C++ object that needs freeing, so nothing is left
// behind whether or not a JS throw runs C++ cleanups on its way out (Emscripten's JS-based
// exceptions ran none). Hence the message's copy in a fixed buffer (long messages are cut, at
// the start of a character).
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  static char message[4096];
  static std::size_t length;
  const char* name;
  auto keep = [](const char* what) {
    length = std::strlen(what);
    if (length >= sizeof message) {
      length = sizeof message - 1;
      while (length > 0 && (static_cast<unsigned char>(what[length]) & 0xC0) == 0x80) --length;
    }
    std::memcpy(message, what, length);
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
  val::module_property("errors")[name].new_(js_text(message, length)).throw_();
}

inline std::vector<std::int32_t> ids_from_js(const val& array) {
  return emscripten::convertJSArrayToNumberVector<std::int32_t>(array);
}

}   // namespace glassbox::js
