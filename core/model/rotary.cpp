#include "model/rotary.h"

#include <cmath>

namespace glassbox {

std::vector<float> rotary_inv_freq(const Rotary& r, int rot_dim) {
  std::vector<float> inv_freq(rot_dim / 2);
  // _compute_default_rope_parameters:
  //   1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
  for (int i = 0; i < rot_dim / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(rot_dim);
    inv_freq[i] = 1.0f / std::pow(static_cast<float>(r.theta), exponent);
  }
  const float factor = static_cast<float>(r.factor);
  switch (r.scaling) {
    case RopeScaling::Default:
      break;
    case RopeScaling::Linear:   // _compute_linear_scaling_rope_parameters: inv_freq /= factor
      for (float& f : inv_freq) f /= factor;
      break;
    case RopeScaling::Llama3: {   // _compute_llama3_parameters
      const double old_context = r.original_max_position_embeddings;
      const float low_freq_wavelen = static_cast<float>(old_context / r.low_freq_factor);
      const float high_freq_wavelen = static_cast<float>(old_context / r.high_freq_factor);
      const float low = static_cast<float>(r.low_freq_factor);
      const float span = static_cast<float>(r.high_freq_factor - r.low_freq_factor);
      for (float& f : inv_freq) {
        const float wavelen = static_cast<float>(2 * M_PI) / f;
        // torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        const float kept = wavelen > low_freq_wavelen ? f / factor : f;
        if (wavelen < high_freq_wavelen || wavelen > low_freq_wavelen) {
          f = kept;
        } else {   // medium frequencies: between the two
          const float smooth = (static_cast<float>(old_context) / wavelen - low) / span;
          f = (1.0f - smooth) * kept / factor + smooth * kept;
        }
      }
      break;
    }
  }
  return inv_freq;
}

}   // namespace glassbox
