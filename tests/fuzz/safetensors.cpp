// The safetensors reader on arbitrary bytes: parse the header, then convert every float tensor the
// way the model loader does (to_f32, and the transposed form for 2-D tensors); and the same bytes
// as a header alone (parse_header), which must agree with parse() wherever parse() succeeds.
#include <vector>

#include "io/dtype.h"
#include "fuzz.h"
#include "glassbox/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  std::vector<std::uint64_t> header_offsets;
  try {
    const SafeTensors layout =
        SafeTensors::parse_header({reinterpret_cast<const std::byte*>(data), size}, "fuzz.safetensors");
    for (const TensorInfo& t : layout.tensors()) header_offsets.push_back(t.offset);
  } catch (const Error&) {
    header_offsets.clear();
  }
  try {
    const SafeTensors st = SafeTensors::parse({reinterpret_cast<const std::byte*>(data), size}, "fuzz.safetensors");
    // Whatever parse() accepts, the header alone describes the same way.
    if (header_offsets.size() != st.tensors().size()) __builtin_trap();
    for (std::size_t i = 0; i < header_offsets.size(); ++i)
      if (header_offsets[i] != st.tensors()[i].offset) __builtin_trap();
    for (const TensorInfo& t : st.tensors()) {
      if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16) continue;
      std::vector<float> out(static_cast<std::size_t>(t.numel));   // numel * dtype size <= size: parse checked
      to_f32(t, out.data());
      if (t.shape.size() == 2) to_f32_transposed(t, t.shape[0], t.shape[1], out.data());
    }
  } catch (const Error&) {
  }
  return 0;
}
