// How far quantized weights move a model's logits from PyTorch's F32 ones, measured as
// tests/model_test.cpp's QuantizedLogitsStayNearPyTorch measures it: the largest error against the
// logits' span, and the root mean square error against their standard deviation (what a broken
// product fails: unrelated logits are off by 140% of it).

// The bounds of QuantizedLogitsStayNearPyTorch (its comment gives the measured values): int4's
// random-weight fixtures are the worst case for 16 levels, hence its loose bounds.
export const QUANTIZED_BOUNDS = {
  int8: { max: 0.04, rms: 0.06 },
  int4: { max: 0.5, rms: 0.6 },
};

// got: Float32Array (T*V); want: PyTorch's logits [T][V] -> {max, span, rms, deviation}.
export function quantizedError(got, want) {
  const flat = want.flat();
  if (got.length !== flat.length) throw new Error(`${got.length} logits, PyTorch has ${flat.length}`);
  let max = 0,
    lo = Infinity,
    hi = -Infinity,
    squares = 0,
    sum = 0,
    sum2 = 0;
  for (let i = 0; i < flat.length; ++i) {
    const diff = got[i] - flat[i];
    max = Math.max(max, Math.abs(diff));
    lo = Math.min(lo, flat[i]);
    hi = Math.max(hi, flat[i]);
    squares += diff * diff;
    sum += flat[i];
    sum2 += flat[i] * flat[i];
  }
  const n = flat.length;
  return { max, span: hi - lo, rms: Math.sqrt(squares / n), deviation: Math.sqrt(sum2 / n - (sum / n) ** 2) };
}

// Asserts the error of `quantize` weights is within its bounds (maxShare: a tighter share of the
// span, where a test holds one), and above F32's 1e-4, so the weights really were quantized.
export function checkQuantizedError(assert, got, want, quantize, where, maxShare = QUANTIZED_BOUNDS[quantize].max) {
  const e = quantizedError(got, want);
  const what =
    `${where} ${quantize}: max |logit - PyTorch| = ${e.max} (${((100 * e.max) / e.span).toFixed(1)}% of the span), ` +
    `rms ${((100 * e.rms) / e.deviation).toFixed(1)}% of the deviation`;
  assert.ok(e.max < maxShare * e.span && e.max > 1e-4, what);
  assert.ok(e.rms < QUANTIZED_BOUNDS[quantize].rms * e.deviation, what);
  return e;
}
