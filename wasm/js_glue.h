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

// The message of the C++ exception being handled, kept past its end (see guarded): a copy in a
// fixed buffer, cut at the start of a character when long. Out of line, as one copy of the code
// serves every binding's guarded().
struct KeptError {
  const char* name;
  char message[4096];
  std::size_t length;
};
inline KeptError kept_error;
[[gnu::noinline]] inline void keep_error(const char* name, const char* what) {
  kept_error.name = name;
  std::size_t length = std::strlen(what);
  if (length >= sizeof kept_error.message) {
    length = sizeof kept_error.message - 1;
    while (length > 0 && (static_cast<unsigned char>(what[length]) & 0xC0) == 0x80) --length;
  }
  std::memcpy(kept_error.message, what, length);
  kept_error.length = length;
}
// Throws the kept error as the JS error of its kind (errors.mjs), its message decoded as the UTF-8
// it is (a name like "lläma" in it stays one).
[[noreturn, gnu::noinline]] inline void throw_kept_error() {
  val::module_property("errors")[kept_error.name].new_(js_text(kept_error.message, kept_error.length)).throw_();
  __builtin_unreachable();
}

// Runs f; a C++ exception becomes the JS error of its kind, with the library's message (a rejected
// promise once it reaches the async API). The JS error is thrown after the C++ exception is done
// with, outside any catch block and past no C++ object that needs freeing, so nothing is left
// behind whether or not a JS throw runs C++ cleanups on its way out (Emscripten's JS-based
// exceptions ran none). Hence the message's copy (keep_error).
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ModelFormatError& e) {
    keep_error("ModelFormatError", e.what());
  } catch (const InvalidArgument& e) {
    keep_error("InvalidArgumentError", e.what());
  } catch (const TemplateError& e) {
    keep_error("TemplateError", e.what());
  } catch (const std::bad_alloc&) {
    keep_error("OutOfMemoryError", "out of WebAssembly memory (a thread's heap holds at most 4 GB)");
  } catch (const std::exception& e) {
    keep_error("GlassboxError", e.what());
  }
  throw_kept_error();
}

inline std::vector<std::int32_t> ids_from_js(const val& array) {
  return emscripten::convertJSArrayToNumberVector<std::int32_t>(array);
}

}   // namespace glassbox::js
