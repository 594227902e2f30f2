// The inverse frequencies of rotary positions (transformers' modeling_rope_utils.py), with the
// scalings config.h's RopeScaling names. kernels/reference.h's rotary() turns q and k by them.
#pragma once

#include <vector>

#include "glassbox/config.h"

namespace glassbox {

// inv_freq (rot_dim/2): inv_freq[i] = 1 / theta^(2i / rot_dim), then scaled:
//   Linear: / factor
//   Llama3: wavelength 2 pi / inv_freq; longer than original_max / low_freq_factor: / factor;
//           shorter than original_max / high_freq_factor: kept; between: blended,
//           s = (original_max / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor),
//           (1 - s) * inv_freq / factor + s * inv_freq.
// In float, step by step as transformers computes it in float32 tensors, so that the angles are
// the same floats.
std::vector<float> rotary_inv_freq(const Rotary& rotary, int rot_dim);

}   // namespace glassbox
