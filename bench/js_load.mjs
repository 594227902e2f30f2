// Loading a model through the public JS API in Node (one thread), each run a fresh process: the
// time from loadModel() to a ready model, the process's peak resident memory, the WebAssembly heap
// the load left behind, and greedy decode tokens/s over 128 tokens. For the streaming load: its
// peak against the weights the model holds.
//
//   node bench/js_load.mjs --runs N --model DIR [--quantize none|int8|int4] [--tokens T]     JSON on stdout
//
// --tokens: how many to generate (default 129); the model's context (1023 after a one-token
// prompt) shows that a full context's keys and values fit beside the weights (heap_mb at the end).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { stats } from './merge.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    model: { type: 'string' },
    quantize: { type: 'string', default: 'none' },
    tokens: { type: 'string', default: '129' },
    child: { type: 'boolean', default: false },
  },
});

if (values.child) {
  const { loadModel } = await import('../web/dist/glassbox.mjs');
  const { loadCore } = await import('../web/dist/engine.mjs');
  await loadCore(); // the module's own start is not the load's
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const model = await loadModel(values.model, { quantize: values.quantize });
  const loadMs = performance.now() - t0;
  const core = await loadCore();
  const heapInUse = core.heapBytesInUse();
  const peakAfterLoad = process.resourceUsage().maxRSS * 1024;
  let n = 0,
    t1 = 0;
  for await (const step of model.generate([464], { maxTokens: Number(values.tokens), temperature: 0 })) {
    if (n++ === 0) t1 = performance.now(); // decode: after the first token
    void step;
  }
  const decodeTokS = (1000 * (n - 1)) / (performance.now() - t1);
  process.stdout.write(
    JSON.stringify({
      load_ms: loadMs,
      rss_before_mb: rssBefore / 2 ** 20,
      peak_rss_load_mb: peakAfterLoad / 2 ** 20,
      peak_rss_mb: process.resourceUsage().maxRSS / 1024,
      heap_in_use_mb: heapInUse / 2 ** 20,
      heap_mb: core.HEAPU8.length / 2 ** 20,
      decode_tok_s: decodeTokS,
      tokens: n,
    }),
  );
  await model.dispose();
} else {
  const runs = Number(values.runs);
  const results = [];
  for (let i = 0; i < runs; ++i) {
    process.stderr.write(`bench: JS API load, ${values.quantize}, run ${i + 1}/${runs}\n`);
    results.push(
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            '--no-experimental-fetch',
            fileURLToPath(import.meta.url),
            '--child',
            '--model',
            values.model,
            '--quantize',
            values.quantize,
            '--tokens',
            values.tokens,
          ],
          { maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] },
        ),
      ),
    );
  }
  const out = { model: values.model, quantize: values.quantize, runs };
  for (const key of Object.keys(results[0])) out[key] = stats(results.map((r) => r[key]));
  console.log(JSON.stringify(out, null, 2));
}
