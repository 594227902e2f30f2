// glassbox against wllama (npm @wllama/wllama: llama.cpp compiled to WebAssembly) in headless
// Chromium, one thread each, cross-origin isolated, on the same weights: each model directory is
// written as GGUF (Q8_0 and Q4_0 by default, scripts/write_gguf.mjs with bench/wllama_peer.mjs's
// id vocabulary) and wllama prefills a 128-token prompt and decodes 128 greedy tokens from it;
// glassbox does the same through its JS API with int8 (Q8_0's peer) and int4 (Q4_0's), in the same
// browser. Each run is a fresh page (load included, timed apart), the two alternating, so both see
// the same spells of a shared machine: prefill tokens/s = prompt / (time to the first token),
// decode tokens/s = the tokens after the first / their time, both as the page sees them (messages
// to and from each engine's worker included). Medians of --runs runs, min-max beside them.
//
// What each computes: the same prompt ids (wllama's tokenizer gets text that splits into exactly
// those ids, and the run fails if it reports another count), greedy sampling, no BOS, a context of
// prompt + decode + 8 positions for both (glassbox's contextLength, wllama's n_ctx), one thread
// (wllama: n_threads 1, its pthreads off; glassbox: threads 1). Differences left: each quantizes
// its activations its own way (llama.cpp: Q8_0 blocks of every product's input; glassbox: its int8
// rule); wllama's KV cache is F32 like glassbox's unless --kv-type f16 (llama.cpp's default);
// wllama stops at its end-of-generation tokens, glassbox at the model's eos_token_id (the same id
// here; a run that stops early counts the tokens it made); wllama's WebAssembly is memory64 with
// JSPI, glassbox's 32-bit.
//
// The cross-check (unless --no-check): glassbox generates greedily giving each step's top 5
// probabilities; wllama follows the same sequence, teacher-forced (after a step where it picks
// another token it goes on from glassbox's, as a new request that reuses its KV cache), giving
// its own top 5 log-probabilities. At every step where glassbox's top-2 margin (log p1 - log p2,
// the logits' margin) is at least MARGIN[type], wllama's token must be glassbox's: the rule of
// bench/llama_cpp_check.mjs. Also reported: the largest |log p difference| over the tokens both
// top-5 lists hold (wllama gives no logits, only its top log-probabilities). On full-size random
// weights the top-2 margins are mostly far below MARGIN, so few steps are compared; --fixtures
// runs the check alone on bench/llama_cpp_check.mjs's test fixtures and prompts, where they clear it.
//
//   cd bench && npm ci && cd ..
//   node bench/wllama.mjs --model gpt2-small=build/bench/gpt2-small-random \
//       [--model llama-3.2-1b=build/bench/llama-3.2-1b] [--types q8_0,q4_0] [--runs 3]
//       [--prompt FILE] [--gguf-dir build/bench/gguf] [--kv-type f32|f16] [--timeout 900] [--no-check]
//
//   node bench/wllama.mjs --fixtures [--types q8_0,q4_0]
//
// --runs 0: the cross-check alone; --no-check: the timed runs alone; --fixtures: the cross-check
// alone, on the test fixtures (scripts/bench runs it before its rounds, and --no-check in them).
//
// Model directories and --gguf-dir must be inside the repository (the server's root; a symbolic
// link to a directory elsewhere will do). JSON on stdout; progress on stderr; a page that does
// not answer within --timeout seconds ends the run with an error. Exits 1 if the check fails.
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { launchOptions } from '../scripts/chromium.mjs';
import { startServer } from '../scripts/serve.mjs';
import { glassboxGenerate } from './chromium_glassbox.mjs';
import { stats } from './merge.mjs';
import { CHECK_FIXTURES, GREEDY_MARGIN, cachedGguf, promptIds } from './peer_inputs.mjs';
import { wllamaGenerate, wllamaGenerateLogprobs, wllamaLoad, writeIdVocabGguf } from './wllama_peer.mjs';

const log = (s) => process.stderr.write(`wllama: ${s}\n`);
// An error ends the run with its message alone (the pages are closed first, in the finally below).
process.setUncaughtExceptionCaptureCallback((e) => {
  log(`error: ${e?.message ?? e}`);
  process.exit(1);
});

const root = resolve(new URL('..', import.meta.url).pathname);
const { values } = parseArgs({
  options: {
    model: { type: 'string', multiple: true },
    types: { type: 'string', default: 'q8_0,q4_0' },
    runs: { type: 'string', default: '3' },
    prompt: { type: 'string' },
    'gguf-dir': { type: 'string', default: join(root, 'build/bench/gguf') },
    'kv-type': { type: 'string', default: 'f32' },
    timeout: { type: 'string', default: '900' },
    'no-check': { type: 'boolean', default: false },
    fixtures: { type: 'boolean', default: false },
  },
});
const PROMPT = 128,
  DECODE = 128,
  CONTEXT = PROMPT + DECODE + 8;
// glassbox's quantization for each GGUF type; the greedy tokens must agree where glassbox's top-2
// margin is at least GREEDY_MARGIN's (bench/peer_inputs.mjs, as bench/llama_cpp_check.mjs).
const QUANTIZE = { f32: 'none', q8_0: 'int8', q4_0: 'int4' };
const MARGIN = GREEDY_MARGIN;
const TOP = 5;
// --fixtures: bench/llama_cpp_check.mjs's models (every writer path) and prompts: 3 prompts of 6
// ids, 20 greedy tokens each. Their logits are wider apart than random full-size models', so
// many more steps clear the margins.
const FIXTURES = CHECK_FIXTURES;
const FIXTURE_SHAPE = { prompts: 3, length: 6, decode: 19, context: 32 };
const fixturePrompts = (nVocab) =>
  Array.from({ length: FIXTURE_SHAPE.prompts }, (_, p) =>
    Array.from({ length: FIXTURE_SHAPE.length }, (_, j) => (1 + 17 * p + 29 * j) % nVocab),
  );

const runs = values.fixtures ? 0 : Number(values.runs);
if (!Number.isInteger(runs) || runs < 0) throw new Error(`--runs must be an integer >= 0, got ${values.runs}`);
if (runs === 0 && values['no-check'])
  throw new Error('--runs 0 (the cross-check alone) and --no-check leave nothing to do');
const timeoutMs = 1000 * Number(values.timeout);
if (!(timeoutMs > 0)) throw new Error(`--timeout must be a positive number of seconds, got ${values.timeout}`);
const types = values.types.split(',');
for (const t of types) if (!(t in QUANTIZE)) throw new Error(`--types: unknown type '${t}' (use f32, q8_0, q4_0)`);
if (!['f32', 'f16'].includes(values['kv-type']))
  throw new Error(`--kv-type must be f32 or f16, got ${values['kv-type']}`);
if (values.fixtures ? values.model?.length || values['no-check'] : !values.model?.length)
  throw new Error('give at least one --model NAME=DIR, or --fixtures alone (the cross-check on the test fixtures)');

// The URL path of a file or directory under the server's root.
function urlPath(path, what) {
  const rel = relative(root, resolve(path));
  if (rel.startsWith('..') || resolve(path) === root)
    throw new Error(
      `${what} ${path} is not inside ${root}, which the page's server serves (a symbolic link inside it will do)`,
    );
  return `/${rel.split(sep).join('/')}`;
}

const models = (values.fixtures ? FIXTURES.map((f) => `${f}=${join(root, 'tests/fixtures', f)}`) : values.model).map(
  (spec) => {
    const eq = spec.indexOf('=');
    if (eq < 1) throw new Error(`--model wants NAME=DIR, got ${spec}`);
    const name = spec.slice(0, eq),
      dir = spec.slice(eq + 1);
    if (!existsSync(join(dir, 'config.json')))
      throw new Error(`--model ${spec}: ${dir} has no config.json (not a model directory)`);
    const vocab = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).vocab_size;
    return { name, dir, vocab, url: `${urlPath(dir, 'model directory')}/` };
  },
);
urlPath(values['gguf-dir'], '--gguf-dir');

// Rejects with a clear message when `promise` does not settle in time (a page that hangs).
function within(promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s (--timeout)`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const servers = {
  // glassbox under the page's own headers; wllama without its Content-Security-Policy
  // (wllama_peer.mjs says why); both cross-origin isolated.
  glassbox: await startServer(root),
  wllama: await startServer(root, 0, { policy: null }),
};
const browser = await chromium.launch(launchOptions);
const chromiumVersion = browser.version();

// A fresh page of `server`'s origin; its console errors are kept for error messages.
async function openPage(server) {
  const page = await browser.newPage();
  const errors = [];
  // (not the 404s of the optional files the JS API looks for)
  page.on(
    'console',
    (m) =>
      m.type() === 'error' &&
      !m.text().startsWith('Failed to load resource') &&
      errors.push(m.text().split('\n')[0].slice(0, 200)),
  );
  page.on('pageerror', (e) => errors.push(String(e).split('\n')[0].slice(0, 200)));
  await page.goto(new URL('web/dist/glassbox.d.ts', servers[server].url).href); // any file of the origin
  const isolated = await page.evaluate(() => globalThis.crossOriginIsolated);
  if (!isolated) throw new Error(`the ${server} page is not cross-origin isolated`);
  return { page, errors };
}

// Runs fn(page) on a fresh page, closes it, and names the page's last errors if it fails.
async function onPage(server, what, fn) {
  const { page, errors } = await openPage(server);
  try {
    return await within(fn(page));
  } catch (e) {
    const seen = errors.length ? `; the page logged: ${[...new Set(errors)].slice(-4).join(' | ')}` : '';
    throw new Error(`${what}: ${e.message.split('\n')[0]}${seen}`);
  } finally {
    await page.close().catch(() => {});
  }
}

// The timed runs' prompt, tokens and context; the fixtures' check (--fixtures) uses shorter ones.
const TIMED = { decode: DECODE, context: CONTEXT };

async function glassboxRun(model, prompt, type, { decode, context } = TIMED, top = 0) {
  return onPage('glassbox', `glassbox ${QUANTIZE[type]} on ${model.name}`, (page) =>
    glassboxGenerate(page, {
      dir: model.url,
      prompt,
      quantize: QUANTIZE[type],
      threads: 1,
      decode,
      contextLength: context,
      top,
    }),
  );
}

async function wllamaRun(model, prompt, type, gguf) {
  return onPage('wllama', `wllama ${type} on ${model.name} (${gguf.file})`, async (page) => {
    const loaded = await wllamaLoadOrSay(page, gguf, CONTEXT);
    const run = await wllamaGenerate(page, { prompt, maxTokens: DECODE + 1 });
    if (run.prompt_tokens !== prompt.length)
      throw new Error(`wllama read the prompt as ${run.prompt_tokens} tokens, not ${prompt.length}`);
    return { ...loaded, ...run };
  });
}

// wllama with the GGUF file on the page; a file it rejects fails saying so (wllama does not name
// the problem: its log, which onPage adds to the error, does).
async function wllamaLoadOrSay(page, gguf, nCtx) {
  let loaded;
  try {
    loaded = await wllamaLoad(page, { url: gguf.url, nCtx, kvType: values['kv-type'] });
  } catch (e) {
    throw new Error(`wllama could not load ${gguf.file} (${e.message.split('\n')[0]})`);
  }
  // On a file it cannot load, wllama's loadModel may resolve all the same, with no context.
  if (!(loaded.n_ctx >= nCtx)) throw new Error(`wllama could not load ${gguf.file} (its context: ${loaded.n_ctx})`);
  versions ??= { libllama: loaded.version, multithread: loaded.multithread };
  return loaded;
}

// The cross-check of one model and type on each of `prompts` (the header says how). -> { steps,
// compared, agree (steps where wllama's token is glassbox's, whatever the margin), partedAtMargin
// (the largest glassbox margin where they differ), maxLogpDiff, requests (wllama's: one per
// prompt, and one more per parting), disagreements, ok }
async function crossCheck(model, prompts, type, gguf, shape = TIMED) {
  const ours = [];
  for (const prompt of prompts) ours.push(await glassboxRun(model, prompt, type, shape, TOP));
  return onPage('wllama', `the cross-check of wllama ${type} on ${model.name}`, async (page) => {
    await wllamaLoadOrSay(page, gguf, shape.context);
    const result = {
      steps: 0,
      compared: 0,
      agree: 0,
      requests: 0,
      maxLogpDiff: 0,
      disagreements: [],
      partedAtMargin: 0,
      margin: MARGIN[type],
    };
    for (const [n, prompt] of prompts.entries()) await followGlassbox(page, prompt, ours[n], type, result);
    result.ok = result.disagreements.length === 0;
    return result;
  });
}

// wllama along glassbox's greedy sequence `ours` after `prompt`, teacher-forced: each request
// generates until wllama picks another token than glassbox, and the next one goes on from
// glassbox's. Adds each step to `result`.
async function followGlassbox(page, prompt, ours, type, result) {
  let pos = 0;
  while (pos < ours.ids.length) {
    const context = [...prompt, ...ours.ids.slice(0, pos)];
    const theirs = await wllamaGenerateLogprobs(page, {
      prompt: context,
      maxTokens: ours.ids.length - pos,
      logprobs: TOP,
    });
    result.requests++;
    if (theirs.prompt_tokens !== context.length)
      throw new Error(`wllama read the context as ${theirs.prompt_tokens} tokens, not ${context.length}`);
    let next = pos + theirs.ids.length;
    for (let j = 0; j <= theirs.ids.length && pos + j < ours.ids.length; j++) {
      const k = pos + j;
      // j === theirs.ids.length: wllama stopped (an end-of-generation token) where glassbox went on.
      const their = j < theirs.ids.length ? theirs.ids[j] : 'end of generation';
      const [p1, p2] = ours.top[k];
      const margin = Math.log(p1[1]) - Math.log(p2[1]);
      result.steps++;
      if (their === ours.ids[k]) result.agree++;
      if (j < theirs.ids.length)
        for (const [id, p] of ours.top[k]) {
          const t = theirs.top[j].find(([i]) => i === id);
          if (t) result.maxLogpDiff = Math.max(result.maxLogpDiff, Math.abs(Math.log(p) - t[1]));
        }
      if (margin >= MARGIN[type]) {
        result.compared++;
        if (their !== ours.ids[k])
          result.disagreements.push({ prompt, step: k, glassbox: ours.ids[k], wllama: their, margin });
      }
      if (their !== ours.ids[k]) {
        result.partedAtMargin = Math.max(result.partedAtMargin, margin);
        next = k + 1; // go on from glassbox's token
        break;
      }
    }
    pos = next;
  }
}

const firstDifference = (a, b) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return `first differ at token ${i}`;
  return a.length === b.length ? 'all equal' : `equal over ${n} tokens, then one stopped`;
};
let versions = null; // wllama's llama.cpp build, once a page has loaded it
const FIELDS = ['load_ms', 'ttft_ms', 'prefill_tok_s', 'decode_tok_s'];

// One model and type's figures from its runs: medians (min-max) of each side, the ratios of the
// medians, and whether the two greedy sequences agree (the first run's of each).
function timings(label, g, w) {
  const summary = (rs) => Object.fromEntries(FIELDS.map((f) => [f, stats(rs.map((x) => x[f]))]));
  const row = {
    glassbox: { threads: g[0].threads, tokens: g[0].ids.length, stop: g[0].stop, ...summary(g) },
    wllama: {
      threads: w[0].threads,
      n_ctx: w[0].n_ctx,
      tokens: w[0].ids.length,
      stop: w[0].stop,
      ...summary(w),
      // wllama's own clock: prompt_ms (its prompt's evaluation and the first token) and
      // predicted_ms (the tokens after the first)
      own_prefill_tok_s: stats(w.map((x) => (1000 * x.timings.prompt_n) / x.timings.prompt_ms)),
      own_decode_tok_s: stats(w.map((x) => (1000 * (x.timings.predicted_n - 1)) / x.timings.predicted_ms)),
    },
    greedy_tokens: firstDifference(g[0].ids, w[0].ids),
  };
  row.ratio = {
    decode: row.glassbox.decode_tok_s.median / row.wllama.decode_tok_s.median,
    prefill: row.glassbox.prefill_tok_s.median / row.wllama.prefill_tok_s.median,
  };
  log(
    `${label}: glassbox decode ${row.glassbox.decode_tok_s.median.toFixed(1)} tok/s, wllama ` +
      `${row.wllama.decode_tok_s.median.toFixed(1)} (${row.ratio.decode.toFixed(2)}x); prefill ` +
      `${row.glassbox.prefill_tok_s.median.toFixed(1)} and ${row.wllama.prefill_tok_s.median.toFixed(1)} tok/s; ` +
      `greedy tokens: ${row.greedy_tokens}`,
  );
  return row;
}

const results = {};
try {
  for (const model of models) {
    const prompt = values.fixtures ? null : promptIds(model.dir, values.prompt, PROMPT);
    const ggufs = Object.fromEntries(
      types.map((type) => {
        const file = cachedGguf(
          join(values['gguf-dir'], `${model.name}-${type}-ids.gguf`),
          model.dir,
          (f) => writeIdVocabGguf(model.dir, f, type),
          log,
        );
        return [type, { file, url: urlPath(file, 'GGUF file') }];
      }),
    );
    const runsOf = Object.fromEntries(types.map((t) => [t, { glassbox: [], wllama: [] }]));
    for (let r = 0; r < runs; r++)
      for (const type of types) {
        log(`${model.name} ${type}, run ${r + 1}/${runs}: glassbox ${QUANTIZE[type]}`);
        runsOf[type].glassbox.push(await glassboxRun(model, prompt, type));
        log(`${model.name} ${type}, run ${r + 1}/${runs}: wllama`);
        const w = await wllamaRun(model, prompt, type, ggufs[type]);
        versions ??= { libllama: w.version, multithread: w.multithread };
        runsOf[type].wllama.push(w);
      }
    for (const type of types) {
      const row = { model: model.name, type, quantize: QUANTIZE[type] };
      if (runs > 0) Object.assign(row, timings(`${model.name} ${type}`, runsOf[type].glassbox, runsOf[type].wllama));
      if (!values['no-check']) {
        log(`${model.name} ${type}: the cross-check`);
        row.check = values.fixtures
          ? await crossCheck(model, fixturePrompts(model.vocab), type, ggufs[type], FIXTURE_SHAPE)
          : await crossCheck(model, [prompt], type, ggufs[type]);
        const c = row.check;
        log(
          `${c.ok ? 'ok  ' : 'FAIL'} ${model.name} ${type} vs ${row.quantize}: ${c.compared}/${c.steps} steps compared ` +
            `(margin >= ${c.margin}), ${c.disagreements.length} disagree; ${c.agree}/${c.steps} steps agree; ` +
            `the largest margin where they part ${c.partedAtMargin.toFixed(3)}; ` +
            `max |log p difference| over both top ${TOP} ${c.maxLogpDiff.toExponential(2)}`,
        );
      }
      results[`${model.name} ${type}`] = row;
    }
  }
} finally {
  await browser.close();
  for (const s of Object.values(servers)) s.server.close();
}

const pkg = JSON.parse(readFileSync(new URL('./node_modules/@wllama/wllama/package.json', import.meta.url), 'utf8'));
console.log(
  JSON.stringify(
    {
      peer: 'wllama',
      package: { '@wllama/wllama': pkg.version, 'llama.cpp': versions?.libllama, multithread: versions?.multithread },
      chromium: chromiumVersion,
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      prompt_tokens: PROMPT,
      decode_tokens: DECODE,
      context: CONTEXT,
      kv_type: values['kv-type'],
      runs,
      results,
    },
    null,
    1,
  ),
);
process.exit(Object.values(results).every((r) => r.check?.ok ?? true) ? 0 : 1);
