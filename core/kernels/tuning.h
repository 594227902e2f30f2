// How the decoding kernels read their weights from memory: the choices measured on the CPUs of
// docs/performance.md (Decoding). A build may set each one (cmake -DGLASSBOX_TUNING_FLAGS=..., as
// bench/build_variants does) to measure the alternatives on another CPU; every shipped build and
// every test uses these defaults.
#pragma once

// How far ahead of its reads each weight stream asks for its cache lines, in bytes (0: it does
// not ask; the hardware prefetchers alone).
#ifndef GLASSBOX_PREFETCH_BYTES
#define GLASSBOX_PREFETCH_BYTES 2048
#endif
// The prefetch's locality: 0 prefetchnta (a streamed weight is read once), 1 prefetcht2,
// 2 prefetcht1, 3 prefetcht0 (into every cache level).
#ifndef GLASSBOX_PREFETCH_HINT
#define GLASSBOX_PREFETCH_HINT 0
#endif
// F32 decoding: packed groups read at once, each its own stream (1 or 2). WebAssembly keeps one:
// two streams' 16 accumulator registers would fill V8's 16.
#ifndef GLASSBOX_DECODE_STREAMS
#ifdef __wasm_simd128__
#define GLASSBOX_DECODE_STREAMS 1
#else
#define GLASSBOX_DECODE_STREAMS 2
#endif
#endif

namespace glassbox::kernels {

constexpr int kPrefetchBytes = GLASSBOX_PREFETCH_BYTES;
constexpr int kPrefetchHint = GLASSBOX_PREFETCH_HINT;
constexpr int kDecodeStreams = GLASSBOX_DECODE_STREAMS;
static_assert(kPrefetchBytes >= 0 && kPrefetchHint >= 0 && kPrefetchHint <= 3);
static_assert(kDecodeStreams == 1 || kDecodeStreams == 2);

}   // namespace glassbox::kernels
