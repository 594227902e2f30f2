// warm_up: the kernels of a forward pass, run on small made-up inputs (see kernels.h for why).
//
// The inputs are a few KB, so the call is cheap. What matters is that each kernel runs long
// enough for V8 to decide it is hot (its tiering budget counts the loop iterations a function
// runs): kRounds is set where fewer rounds left more of the first forward pass's extra time and
// more rounds gained nothing (docs/performance.md, The first token in WebAssembly).
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quantized.h"

namespace glassbox::kernels {

void warm_up() {
  constexpr int T = 6, K = 64, N = 64, hd = 16, kRounds = 100;
  std::vector<float> x(T * K, 0.5f), w(N * K, 0.25f), packed(N * K), bias(N, 0.0f), out(T * N), scratch(T);
  std::vector<float> heads_scratch(T * K / hd);   // attention_one_query: K / hd heads over T keys
  pack_matrix(packed.data(), w.data(), N, K);
  const Q8Shape s(N, K);
  std::vector<std::int8_t> wq(s.q_size());
  std::vector<float> wd(s.d_size());
  quantize_weights_q8(wq.data(), wd.data(), w.data(), N, K);
  Q8Activations prompt, token;
  for (int round = 0; round < kRounds; ++round) {
    matmul(out.data(), x.data(), packed.data(), bias.data(), T, K, N);   // a prompt's tiles
    matmul(out.data(), x.data(), packed.data(), bias.data(), 1, K, N);   // decoding's streams
    quantize_activations_q8(prompt, x.data(), T, K);
    quantize_activations_q8(token, x.data(), 1, K);
    matmul_q8(out.data(), prompt, wq.data(), wd.data(), bias.data(), N);
    matmul_q8(out.data(), token, wq.data(), wd.data(), bias.data(), N);
    layernorm(out.data(), x.data(), w.data(), bias.data(), T, K, 1e-5f);   // weight: w's first K (N = K)
    gelu_tanh(out.data(), out.size());
    softmax(out.data(), N);
    attention(out.data(), K, x.data(), K, x.data(), x.data(), K, T, 0, hd, 0.25f, nullptr, scratch.data());
    attention_one_query(out.data(), x.data(), x.data(), x.data(), K, T, K / hd, hd, 0.25f, nullptr,
                        heads_scratch.data());
  }
}

}   // namespace glassbox::kernels
