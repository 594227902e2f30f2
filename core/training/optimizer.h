// Gradient clipping and AdamW, with the exact arithmetic of PyTorch 1.13's
// torch.nn.utils.clip_grad_norm_ and torch.optim.AdamW (single-tensor path), so that a run can be
// checked step by step against PyTorch (tests/fixtures/train-*, scripts/make_training_fixtures.py).
#pragma once

#include <cstddef>

#include "training/parameters.h"

namespace glassbox::training {

struct AdamWSettings {
  double learning_rate;   // this step's, from the schedule
  double beta1, beta2, eps, weight_decay;
};

// Global L2 norm of the gradient (accumulated in double), and if it exceeds max_norm > 0, scales
// the gradient by max_norm / (norm + 1e-6) as PyTorch does. Returns the norm before clipping.
template <class Real>
double clip_gradients(Real* grads, std::size_t n, double max_norm);

// One AdamW update of every parameter; `step` counts updates from 1 (bias correction).
// Weight decay (decoupled: p *= 1 - lr * wd) applies to the tensors the layout marks as matrices.
template <class Real>
void adamw_update(const ParameterLayout& layout, Real* params, const Real* grads, Real* m, Real* v, long step,
                  const AdamWSettings& s);

}   // namespace glassbox::training
