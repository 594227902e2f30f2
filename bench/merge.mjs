// Merges the JSON of several benchmark rounds into one, as if one script had made every run.
//
//   node bench/merge.mjs ROUND1.json ROUND2.json ...   -> JSON on stdout
//
// Why rounds: a shared machine (a VM) serves others from the same cores and memory, and its
// speed moves in phases (the same product can run up to nearly twice as fast in one process as in
// the next: docs/performance.md, How figures are measured). Figures measured one after another, glassbox's
// runs then the peers', would each see different phases, and their ratios would measure the
// phases.
// scripts/bench therefore runs every engine once per round, round after round, and this script
// pools the rounds: each figure's median, min and max over all its runs.
//
// Every figure is a {median, min, max, runs, values} object (values: one per run); it is
// recomputed from the pooled values. A count `runs` is summed; a flag saying the tokens were
// the same every run holds only if it held in every round and the rounds' tokens agree;
// anything else (settings, token lists) is the first round's.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function stats(values) {
  const v = [...values].sort((a, b) => a - b);
  return { median: v[Math.floor(v.length / 2)], min: v[0], max: v.at(-1), runs: v.length, values };
}

const isFigure = (x) => x !== null && typeof x === 'object' && Array.isArray(x.values) && 'median' in x;
const SAME_TOKENS = ['deterministic', 'tokens_same_every_run'];

function merge(nodes, key) {
  const first = nodes[0];
  if (isFigure(first)) return stats(nodes.flatMap((n) => n.values));
  if (key === 'runs' && typeof first === 'number') return nodes.reduce((sum, n) => sum + n, 0);
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  const out = Object.fromEntries(
    Object.keys(first).map((k) => [
      k,
      merge(
        nodes.map((n) => n[k]),
        k,
      ),
    ]),
  );
  const tokensAgree = nodes.every((n) => JSON.stringify(n.tokens) === JSON.stringify(first.tokens));
  for (const flag of SAME_TOKENS) if (flag in first) out[flag] = tokensAgree && nodes.every((n) => n[flag] === true);
  return out;
}

if (fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = process.argv.slice(2);
  if (!files.length) {
    process.stderr.write('usage: node bench/merge.mjs ROUND.json [ROUND.json ...]\n');
    process.exit(2);
  }
  const rounds = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
  process.stdout.write(JSON.stringify(merge(rounds, ''), null, 2) + '\n');
}
