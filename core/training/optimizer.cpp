#include "training/optimizer.h"

#include <cmath>

namespace glassbox::training {

template <class Real>
double clip_gradients(Real* grads, std::size_t n, double max_norm) {
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += double(grads[i]) * double(grads[i]);
  const double norm = std::sqrt(sum);
  const double coef = max_norm / (norm + 1e-6);
  if (max_norm > 0 && coef < 1.0) {
    const Real c = static_cast<Real>(coef);
    for (std::size_t i = 0; i < n; ++i) grads[i] *= c;
  }
  return norm;
}

template <class Real>
void adamw_update(const ParameterLayout& layout, Real* params, const Real* grads, Real* m, Real* v, long step,
                  const AdamWSettings& s) {
  // torch.optim.adamw._single_tensor_adamw, term by term
  const Real b1 = Real(s.beta1), b2 = Real(s.beta2);
  const Real step_size = Real(s.learning_rate / (1.0 - std::pow(s.beta1, double(step))));
  const Real bias2_sqrt = Real(std::sqrt(1.0 - std::pow(s.beta2, double(step))));
  const Real eps = Real(s.eps);
  for (const auto& slot : layout.slots()) {
    if (!slot.trainable) continue;   // fixed: its gradient is zero and it never moves
    const Real decay = slot.decay ? Real(1.0 - s.learning_rate * s.weight_decay) : Real(1);
    for (std::size_t i = slot.offset; i < slot.offset + slot.size; ++i) {
      params[i] *= decay;
      m[i] = m[i] * b1 + grads[i] * (Real(1) - b1);
      v[i] = v[i] * b2 + grads[i] * grads[i] * (Real(1) - b2);
      params[i] -= step_size * m[i] / (std::sqrt(v[i]) / bias2_sqrt + eps);
    }
  }
}

template double clip_gradients<float>(float*, std::size_t, double);
template double clip_gradients<double>(double*, std::size_t, double);
template void adamw_update<float>(const ParameterLayout&, float*, const float*, float*, float*, long,
                                  const AdamWSettings&);
template void adamw_update<double>(const ParameterLayout&, double*, const double*, double*, double*, long,
                                   const AdamWSettings&);

}   // namespace glassbox::training
