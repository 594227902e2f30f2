// One timed generation of glassbox in a Chromium page, as the page runs it: the JS API with the
// engine in a Web Worker, the model loaded from the server the page came from. Shared by
// bench/browser.mjs (threads, isolated or not) and bench/wllama.mjs (one thread, beside wllama).
//
// Per call: load (quantized as asked), then time to the first generated token for the prompt
// (prefill), then tokens/s over the greedy tokens after it (decode). The page must be at a URL of
// the server whose root holds web/dist/ and the model directory.

// page: a playwright page already at the server's origin. dir: the model directory's URL path
// ("/build/bench/NAME/"). prompt: token ids. threads: 0 for the API's default. contextLength: 0
// for the API's default. top: > 0 adds each step's `top` most probable tokens (the cross-checks'
// margins; it costs a softmax a step, so timed runs leave it out).
// -> { threads, load_ms, ttft_ms, prefill_tok_s, decode_tok_s, ids, stop, top? }
export async function glassboxGenerate(
  page,
  { dir, prompt, quantize = 'none', threads = 0, decode = 128, contextLength = 0, top = 0 },
) {
  return page.evaluate(
    async ({ dir, prompt, quantize, threads, decode, contextLength, top }) => {
      const { loadModel } = await import('/web/dist/glassbox.mjs');
      let t0 = performance.now();
      const model = await loadModel(dir, {
        worker: true,
        quantize,
        ...(threads ? { threads } : {}),
        ...(contextLength ? { contextLength } : {}),
      });
      const load_ms = performance.now() - t0;
      const ids = [],
        tops = [];
      t0 = performance.now();
      let first = 0;
      const generation = model.generate(prompt, { maxTokens: decode + 1, temperature: 0, ...(top ? { top } : {}) });
      let step;
      while (!(step = await generation.next()).done) {
        if (ids.length === 0) first = performance.now();
        ids.push(step.value.id);
        if (top) tops.push(step.value.top.map((t) => [t.id, t.probability]));
      }
      const end = performance.now();
      const result = {
        threads: model.threads,
        load_ms,
        ttft_ms: first - t0,
        prefill_tok_s: (1000 * prompt.length) / (first - t0),
        decode_tok_s: (1000 * (ids.length - 1)) / (end - first),
        ids,
        stop: step.value.stopReason,
        ...(top ? { top: tops } : {}),
      };
      await model.dispose();
      return result;
    },
    { dir, prompt, quantize, threads, decode, contextLength, top },
  );
}
