// The experiments' figures for scripts/bench --experiments: activation patching of a 20-token
// prompt pair on the GPT-2-small-shaped model with random weights, on one thread, natively and in
// WebAssembly under Node (glassbox_perf patch, bench/perf.cpp: the C++ API the JS API calls), each
// run a fresh process, in rounds (every build once per round) -> medians with min-max. The pair
// differs at position 10; resid_pre alone (the figure: 12 layers x 20 positions), then all
// four sites. JSON on stdout.
//
//   node bench/experiments.mjs --runs N --model DIR
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';

import { stats } from './merge.mjs';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, model: { type: 'string' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
if (!values.model) throw new Error('--model DIR is required');

const builds = {
  native: [`${root}build/native/glassbox_perf`, []],
  wasm: [process.execPath, ['--no-experimental-fetch', `${root}build/wasm/glassbox_perf.js`]],
};
const samples = { native: [], wasm: [] };
for (let r = 0; r < runs; ++r)
  for (const [name, [file, argv]] of Object.entries(builds)) {
    const args = [...argv, 'patch', values.model, '--tokens', '20', '--at', '10', '--threads', '1'];
    samples[name].push(JSON.parse(execFileSync(file, args, { stdio: ['ignore', 'pipe', 'inherit'] }).toString()));
  }
const figures = {};
for (const [name, list] of Object.entries(samples))
  figures[name] = {
    resid_pre_ms: stats(list.map((s) => s.resid_pre_ms)),
    all_sites_ms: stats(list.map((s) => s.all_sites_ms)),
  };
console.log(
  JSON.stringify(
    { cpu: cpus()[0].model, model: values.model, tokens: 20, differs_at: 10, threads: 1, ...figures },
    null,
    1,
  ),
);
