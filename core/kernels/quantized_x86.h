// The x86 kernels of matmul_q8 and matmul_q4 (layouts and contract in quantized.h). Each is compiled
// in its own file with its instruction set switched on (quantized_avx2.cpp, quantized_avx_vnni.cpp,
// quantized_vnni.cpp), and matmul_q8 calls it only when the CPU reports that set. Those files see
// nothing but this header and the loops in quantized_x86_loop.h and quantized_x86_prompt.h (and
// quantized_x86_vnni.h's products): an inline function of a shared header compiled there
// (std::vector's, say) could be the copy the linker keeps for the whole program, with
// instructions the CPU may not have.
#pragma once

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
#define GLASSBOX_X86_KERNELS 1

#include <cstdint>

namespace glassbox::kernels::x86 {

constexpr int kBlockValues = 32, kGroupRows = 4;   // kQ8Block and kQ8Rows (checked in quantized.cpp)

// The parts of Q8Activations these kernels read, as plain pointers.
struct Q8Rows {
  const std::int8_t* q;         // (T,Kp)
  const float* d;               // (T,blocks)
  const std::int32_t* sum128;   // (T,blocks) 128 * sum of q over the block
  int T, Kp, blocks;
};

// out (T,N) with rows ld apart; int8 weights (std::int8_t) or int4's nibbles (std::uint8_t).
void matmul_avx2(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias, int N);
void matmul_avx2(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                 int N);
void matmul_avx_vnni(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias,
                     int N);
void matmul_avx_vnni(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                     int N);
void matmul_vnni(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias, int N);
void matmul_vnni(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                 int N);

}   // namespace glassbox::kernels::x86
#endif
