// The safetensors reader on arbitrary bytes: parse the header, then convert every float tensor the
// way the model loader does (to_f32, and the transposed form for 2-D tensors).
#include <vector>

#include "io/dtype.h"
#include "fuzz.h"
#include "glassbox/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  try {
    const SafeTensors st = SafeTensors::parse({reinterpret_cast<const std::byte*>(data), size}, "fuzz.safetensors");
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
