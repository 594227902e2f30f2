// Combines glassbox_bench's Google Benchmark JSON with the peers' JSON: prints a table of medians
// (min-max) and the ratios glassbox / peer, and writes everything as JSON if given a path.
//
//   node scripts/bench_report.mjs NATIVE.json PEERS.json [OUT.json]
import { readFileSync, writeFileSync } from 'node:fs';

const [nativeFile, peersFile, outFile] = process.argv.slice(2);
const native = JSON.parse(readFileSync(nativeFile, 'utf8'));
const peers = JSON.parse(readFileSync(peersFile, 'utf8'));

// Google Benchmark: one "iteration" entry per repetition; bytes_per_second in bytes.
function stats(name) {
  const rates = native.benchmarks
    .filter((b) => b.run_name === name && b.run_type === 'iteration')
    .map((b) => b.bytes_per_second / 1e6)
    .sort((a, b) => a - b);
  if (!rates.length) throw new Error(`no runs of ${name} in ${nativeFile}`);
  return { median: rates[Math.floor(rates.length / 2)], min: rates[0], max: rates[rates.length - 1], runs: rates.length };
}

const ours = {
  tokens: native.benchmarks.find((b) => b.run_name === 'tokenizer/encode/min_time:1.000')?.tokens,
  encode_mb_s: stats('tokenizer/encode/min_time:1.000'),
  decode_mb_s: stats('tokenizer/decode/min_time:1.000'),
};
const ctx = native.context;
const report = {
  machine: { cpu: ctx.cpu, compiler: ctx.compiler, num_cpus: ctx.num_cpus, mhz_per_cpu: ctx.mhz_per_cpu, node: peers.node,
             build_type: ctx.library_build_type, date: ctx.date },
  text_bytes: peers.text_bytes,
  tokenizer: { 'glassbox (native)': ours, ...peers.results },
};

const f = (s) => `${s.median.toFixed(2)} MB/s (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
console.log(`machine: ${ctx.cpu}, ${ctx.num_cpus} CPUs at ${ctx.mhz_per_cpu} MHz, ${ctx.compiler}, ${peers.node}; text ${(peers.text_bytes / 1e6).toFixed(2)} MB (Brown corpus)`);
for (const op of ['encode', 'decode']) {
  console.log(`tokenizer ${op}, median (min-max) of ${ours[`${op}_mb_s`].runs} runs:`);
  console.log(`  ${'glassbox (native)'.padEnd(20)} ${f(ours[`${op}_mb_s`])}   ${ours.tokens} tokens`);
  for (const [name, r] of Object.entries(peers.results)) {
    const ratio = ours[`${op}_mb_s`].median / r[`${op}_mb_s`].median;
    console.log(`  ${name.padEnd(20)} ${f(r[`${op}_mb_s`])}   ${r.tokens} tokens   glassbox/${name} = ${ratio.toFixed(1)}x`);
  }
}
if (outFile) writeFileSync(outFile, JSON.stringify(report, null, 2) + '\n');
