// glassbox page: wires the modules under app/ together.
//
//   model picker ──loaded──▶ prompt ──tokenize/forward──▶ Sequence ──▶ tokens, attention, output, layers
//                             Generate ──steps──▶ Sequence + output + next-token chart + layers + status
//
// The Train panel (app/train-panel.mjs) trains a GPT in a worker of its own and, when the person
// uses the result, hands it to the model picker as "Trained here".
//
// The views follow the kind of model loaded (modelKind): a GPT generates (Output, Next token,
// Layers); a classifier labels the prompt (Classification); a masked LM fills the prompt's masks
// (Fill mask). Tokens and Attention are there for all three.
//
// The engine (web/dist/glassbox.mjs) runs in a Web Worker; every call is async. Everything the
// model produces is put in the page as text (textContent / text nodes), never as HTML.
import { AttentionView } from './app/attention-view.mjs';
import { ClassifyView } from './app/classify-view.mjs';
import { formatInt } from './app/dom.mjs';
import { FillMaskView } from './app/fill-mask-view.mjs';
import { FramePacer } from './app/frame-pacer.mjs';
import { Generation } from './app/generation.mjs';
import { LayersView, LENS_TOKENS } from './app/layers-view.mjs';
import { MaskCompare } from './app/mask-compare.mjs';
import { ModelPicker } from './app/model-picker.mjs';
import { mostProbable, NextTokenChart } from './app/next-token.mjs';
import { OutputView, promptSegments } from './app/output-view.mjs';
import { SamplingInputs } from './app/sampling.mjs';
import { Sequence } from './app/sequence.mjs';
import { StatusLine } from './app/status.mjs';
import { TokenTexts } from './app/token-text.mjs';
import { TokensView } from './app/tokens-view.mjs';
import { SHIPPED } from './start.mjs';

const $ = (id) => document.getElementById(id);
const promptInput = $('prompt');
const allowSpecial = $('allow-special');
const generateButton = $('generate');
const stopButton = $('stop');
const promptError = $('prompt-error');
const tokenCount = $('token-count');
const modelInfo = $('model-info');

const state = {
  model: null,
  kind: 'lm', // of the model (modelKind)
  endOfText: null, // a classifier's <|endoftext|> id, which the page puts after the prompt
  example: SHIPPED.example, // the model's example prompt, replaced by the next model's if not edited
  tokenizer: null, // the first model's tokenizer, while its weights are still on their way
  shape: null, // the model's sizes as the engine parsed them (model.shape; the tokenizer's before)
  texts: null, // TokenTexts of the model
  seq: null, // Sequence of the current prompt (+ generated tokens)
  generation: null, // the running Generation
  running: Promise.resolve(),
  loading: null, // name of the model being loaded, or null
  loadStarted: 0,
  silenced: new Set(), // heads switched off, "layer:head"
};

// Async work reads the page's state when it starts and may finish after the person has moved on.
// `shown()` captures what the page shows now; `stillShown(was)` tells whether it still does: the
// same model and the same prompt (Sequence), and, unless `duringGeneration`, no generation running.
const shown = () => ({ model: state.model, seq: state.seq });
const stillShown = (was, { duringGeneration = false } = {}) =>
  was.model === state.model && was.seq === state.seq && (duringGeneration || !state.generation);

// The heads switched off as the API's headMask ([[layer, head], ...]), or undefined for none.
const headMask = () => (state.silenced.size ? [...state.silenced].map((k) => k.split(':').map(Number)) : undefined);
const headsLabel = () => {
  const names = [...state.silenced].map((k) => k.replace(/^(\d+):(\d+)$/, 'L$1 H$2'));
  return names.length <= 3 ? `head${names.length > 1 ? 's' : ''} ${names.join(', ')}` : `${names.length} heads`;
};

// 'classifier' (config.json names a *ForSequenceClassification), 'mlm' (a bidirectional model with
// a mask token) or 'lm' (a GPT), from a model or, before its weights, its config.
function modelKind(config, model = null) {
  if (model ? model.labels.length : (config.architectures ?? []).some((a) => /ForSequenceClassification$/.test(a)))
    return 'classifier';
  return (model ? model.bidirectional : config.bidirectional === true) ? 'mlm' : 'lm';
}

// Shows the views of a kind of model and hides the others'.
let allowSpecialWas = null; // the checkbox as the person left it, while a masked LM is loaded
function showKind(kind) {
  const was = state.kind;
  state.kind = kind;
  const lm = kind === 'lm';
  for (const id of ['output-region', 'next-region', 'layers-region', 'sampling', 'generate-actions'])
    $(id).hidden = !lm;
  $('classify-region').hidden = kind !== 'classifier';
  $('fill-mask-region').hidden = kind !== 'mlm';
  $('mask-switch').hidden = kind === 'mlm'; // its attention is the bidirectional one already
  if (kind === 'mlm' && masks.on) $('mask-switch').click();
  $('prompt-keys').textContent = lm
    ? 'Ctrl+Enter generates, Escape stops.'
    : kind === 'classifier'
      ? 'The label follows as you type.'
      : 'The guesses follow as you type.';
  // A masked LM's prompt holds masks: its special tokens are always read.
  if (kind === 'mlm' && was !== 'mlm') {
    allowSpecialWas = allowSpecial.checked;
    allowSpecial.checked = true;
  } else if (kind !== 'mlm' && was === 'mlm') {
    allowSpecial.checked = allowSpecialWas;
  }
  allowSpecial.disabled = kind === 'mlm';
  $('tokens-help').textContent =
    'Select a token (click, or Enter/Space; arrow keys move) to see how much it attends to each ' +
    `${kind === 'mlm' ? 'other token (before and after it)' : 'earlier token'} in the chosen layer and head.`;
}

const status = new StatusLine($('status'));
const sampling = new SamplingInputs();
const output = new OutputView($('output'));
const next = new NextTokenChart($('next-caption'), $('next-bars'));
const tokens = new TokensView($('tokens'), $('token-detail'), { onSelect: () => refreshHighlight() });
const attention = new AttentionView({
  layerSelect: $('layer'),
  headSelect: $('head'),
  thumbs: $('thumbs'),
  empty: $('heatmap-empty'),
  heatmap: {
    canvas: $('heatmap'),
    overlay: $('heatmap-overlay'),
    cols: $('heatmap-cols'),
    rows: $('heatmap-rows'),
    corner: $('heatmap-corner'),
    scroller: $('heatmap-scroll'),
    readout: $('heatmap-readout'),
  },
  onChange: () => refreshHighlight(),
  onSelectQuery: (q) => {
    tokens.select(q);
    refreshHighlight();
  },
  onRestore: restoreWindows,
  onToggleHead: toggleHead,
});
const resetHeads = $('reset-heads');
const classifyView = new ClassifyView({ verdict: $('classify-verdict'), list: $('classify-bars') });
const fillMask = new FillMaskView({ caption: $('fill-mask-caption'), list: $('fill-mask-list') });
const layers = new LayersView({
  caption: $('layers-caption'),
  table: $('layers-table'),
  grid: $('layers-grid'),
  onView: () => refreshLens(),
});
const masks = new MaskCompare({
  switchButton: $('mask-switch'),
  panel: $('mask-compare'),
  causalCanvas: $('mask-causal'),
  bidirectionalCanvas: $('mask-bidirectional'),
  caption: $('mask-caption'),
  onToggle: (on) => {
    if (on) refreshMasks();
  },
});

// Both masks' attention for the current text (when the switch is on; not while generating).
function refreshMasks() {
  if (!masks.on || state.generation || !state.model || !state.seq) return chain;
  const { model, shape, seq } = state;
  chain = chain
    .then(() => masks.compute(model, shape, seq.ids))
    .catch((e) => {
      if (model === state.model) status.set(`Cannot compare the masks: ${e.message}`, 'error');
    });
  return chain;
}

// --- heads switched off: the page runs the model with a head mask (prompt, generation, layers)

function toggleHead(layer, head) {
  if (state.generation) {
    status.set('Heads switch off and on between generations: press Stop first.', 'error');
    return;
  }
  const key = `${layer}:${head}`;
  if (!state.silenced.delete(key)) state.silenced.add(key);
  headsChanged();
}

const RUNS_WITH = {
  // what a head switched off changes, by kind of model
  lm: 'the attention, the layers, the next token and generation are',
  classifier: 'the attention and the label are',
  mlm: 'the attention and the guesses at the masks are',
};

function headsChanged() {
  attention.setSilenced(state.silenced);
  resetHeads.disabled = state.silenced.size === 0;
  $('heads-note').textContent = state.silenced.size
    ? `${headsLabel()[0].toUpperCase()}${headsLabel().slice(1)} off: ${RUNS_WITH[state.kind]} the model's without ${state.silenced.size === 1 ? 'it' : 'them'}.`
    : 'A thumbnail opens its head large; its × switch (or X on a focused thumbnail) turns the head off, and the model then runs without it.';
  ++wanted; // the prompt's attention and layers again, with the mask
  flushPrompt().then(refreshComparison);
}

// The Next token chart with heads off: the distribution after the last token with every head and
// without the silenced ones, side by side (each the last position's logits of one forward pass).
function refreshComparison() {
  const was = shown(),
    { model, seq } = was,
    texts = state.texts;
  if (state.kind !== 'lm' || !state.silenced.size || state.generation || !model || !seq?.length) return chain;
  const limit = state.shape.positions;
  const ids = seq.ids.slice(-limit),
    mask = headMask(),
    label = headsLabel(),
    position = seq.length - 1;
  chain = chain
    .then(async () => {
      if (!stillShown(was)) return;
      const [all, masked] = [
        await model.forward(ids, { logits: 'last' }),
        await model.forward(ids, { logits: 'last', headMask: mask }),
      ];
      if (!stillShown(was)) return;
      await next.compare(position, mostProbable(all.logits, 10), mostProbable(masked.logits, 10), label, (id) =>
        texts.get(id),
      );
    })
    .catch((e) => {
      if (model === state.model) status.set(`Cannot compare with the heads off: ${e.message}`, 'error');
    });
  return chain;
}

// The prompt's logit lens, once the Layers panel is in view (it costs an LM head per layer and
// position; not while generating).
function refreshLens() {
  const was = shown(),
    { model, seq } = was,
    texts = state.texts;
  if (state.kind !== 'lm' || !layers.inView || !layers.needsPrompt || state.generation || !model || !seq?.promptLength)
    return chain;
  if (seq.promptLength > state.shape.positions) return chain;
  const ids = seq.ids.slice(0, seq.promptLength),
    promptTexts = seq.texts.slice(0, seq.promptLength);
  chain = chain
    .then(async () => {
      if (!stillShown(was, { duringGeneration: true }) || !layers.needsPrompt) return;
      const { lens } = await model.forward(ids, { lens: LENS_TOKENS, logits: false, headMask: headMask() });
      if (!stillShown(was, { duringGeneration: true })) return;
      await layers.setPrompt(ids, promptTexts, lens, (id) => texts.get(id));
    })
    .catch((e) => {
      if (model === state.model) status.set(`Cannot compute the layers: ${e.message}`, 'error');
    });
  return chain;
}

// A long generation keeps one context of attention rows (sequence.mjs). When an earlier token is
// selected, the rows of its window are computed again once nothing is generating: one forward pass
// over each window's tokens, exactly as the engine computed them when it slid to that window.
let restoring = false;
function restoreWindows(starts) {
  const was = shown(),
    { model, seq } = was;
  if (restoring || state.generation || !model || !seq) return;
  restoring = true;
  const current = () => stillShown(was);
  chain = chain
    .then(async () => {
      if (!current()) return; // another model, prompt or generation came first
      seq.dropRestored();
      for (const start of starts) {
        const ids = seq.ids.slice(start, start + seq.keepRows);
        const { attention: matrix } = await model.forward(ids, { attention: true, logits: false });
        if (!current()) return;
        seq.restoreWindow(start, matrix);
      }
      attention.update({ thumbs: true, force: true });
      refreshHighlight();
    })
    .catch((e) => {
      if (current()) status.set(`Cannot compute the attention of earlier tokens: ${e.message}`, 'error');
    })
    .finally(() => {
      restoring = false;
    });
}

// --- the selected token's attention, painted on chips and output text

function refreshHighlight() {
  const q = tokens.selected,
    seq = state.seq;
  const weights = q >= 0 && seq ? seq.row(attention.layer, attention.head, q) : null;
  const why =
    q < 0 || weights
      ? ''
      : seq?.wasDropped(q)
        ? 'Its attention was let go while generating (the page keeps one context of it) and is computed again when generation ends.'
        : 'Its attention row comes with the next generated token.';
  tokens.highlight(q >= 0 ? weights : null, why);
  output.highlight(weights, q);
  if (q >= 0 && state.texts) layers.show(q, (id) => state.texts.get(id)).catch(() => {});
  attention.setSelected(q);
  masks.draw(attention.layer, attention.head);
}

// --- prompt -> tokens -> attention, as the person types (debounced; only the latest text counts)

let wanted = 0; // version of the prompt text asked for
let analyzed = -1; // version whose tokens are shown
let debounce = 0;
let chain = Promise.resolve();
// Whether version v of the prompt, read with this model, is still the one to show.
const stillWanted = (v, model) => v === wanted && model === state.model;

function promptChanged() {
  ++wanted;
  clearTimeout(debounce);
  debounce = setTimeout(flushPrompt, 120);
}

function flushPrompt() {
  clearTimeout(debounce);
  debounce = 0;
  const v = wanted;
  chain = chain.then(() => analyzePrompt(v)).catch((e) => showPromptError(`Cannot read the prompt: ${e.message}`));
  return chain;
}

async function analyzePrompt(v) {
  // This model's, even if another loads meanwhile. Before the first model is ready, its tokenizer
  // alone (onTokenizer): the tokens show, the attention comes with the model.
  const { model, tokenizer, texts: tokenTexts, kind } = state;
  if (v !== wanted || !(model ?? tokenizer)) return;
  const ids = await (model ?? tokenizer).tokenize(promptInput.value, { allowSpecial: allowSpecial.checked });
  if (kind === 'classifier' && state.endOfText !== null) ids.push(state.endOfText); // the token it reads
  const texts = await tokenTexts.many(ids);
  if (!stillWanted(v, model)) return;
  // Attention rows of one context's worth of tokens: a long generation holds no more than that.
  const { layers: L, heads: H, positions: limit } = state.shape;
  const seq = new Sequence(L, H, limit, { bidirectional: kind === 'mlm' });
  seq.setPrompt(ids, texts);
  state.seq = seq;
  layers.reset(L);
  analyzed = v;
  tokens.reset(ids.map((id, i) => ({ id, text: texts[i] })));
  const tooLong = ids.length > limit;
  tokenCount.textContent = `${formatInt(ids.length)} token${ids.length === 1 ? '' : 's'} of ${formatInt(limit)}.`;
  showPromptError(
    tooLong
      ? `The prompt has ${formatInt(ids.length)} tokens; this model reads at most ${formatInt(limit)}. Shorten it.`
      : '',
  );
  if (!model) return; // the tokenizer alone: the rest comes with the model (onLoaded reads the prompt again)
  next.reset();
  output.showPlaceholder();
  attention.setSequence(seq);
  refreshHighlight();
  if (tooLong) {
    masks.clear(masks.on ? 'The prompt is longer than the model reads: nothing to compare.' : '');
    classifyView.clear('The prompt is longer than the model reads: shorten it.');
    fillMask.clear('The prompt is longer than the model reads: shorten it.');
    return;
  }
  if (!promptInput.value) {
    classifyView.clear('Type a text: the classifier labels it.');
    fillMask.clear(`Type a text with ${maskText()} where the model should guess a token.`);
  }
  if (!ids.length) {
    if (masks.on) await masks.compute(model, state.shape, ids);
    return;
  }
  // With the Layers panel in view, the same pass gives the prompt's logit lens; a masked LM's
  // pass gives its guesses (the logits at its masks).
  const withLens = kind === 'lm' && layers.inView,
    guessing = kind === 'mlm' && ids.includes(model.maskTokenId);
  const {
    attention: matrix,
    lens,
    logits,
  } = await model.forward(ids, {
    attention: true,
    logits: guessing,
    lens: withLens ? LENS_TOKENS : undefined,
    headMask: headMask(),
  });
  if (!stillWanted(v, model)) return;
  seq.setPromptAttention(matrix);
  if (lens) await layers.setPrompt(ids, texts, lens, (id) => state.texts.get(id));
  attention.update({ thumbs: true, force: true });
  refreshHighlight();
  if (kind === 'classifier' && promptInput.value) await showClassification(model, ids, v);
  if (kind === 'mlm' && !guessing && promptInput.value)
    fillMask.clear(`The prompt has no mask: write ${maskText()} where the model should guess a token.`);
  if (guessing)
    await fillMask.show(ids, logits, model.maskTokenId, {
      textOf: (id) => state.texts.get(id),
      detokenize: (x) => model.detokenize(x),
    });
  if (masks.on) await masks.compute(model, state.shape, ids);
}

// The classifier's verdict on ids (the prompt's, then <|endoftext|>), with the heads switched
// off and, if any are, with every head too.
async function showClassification(model, ids, v) {
  const mask = headMask();
  const result = await model.classify(ids, { headMask: mask });
  const all = mask ? await model.classify(ids) : null;
  if (!stillWanted(v, model)) return;
  classifyView.show(result, all, mask ? headsLabel() : '');
}

// The masked LM's mask as written in a prompt (<|mask|>).
const maskText = () => state.maskText ?? '<|mask|>';

function showPromptError(message) {
  promptError.textContent = message;
  promptError.hidden = !message;
  if (message) promptInput.setAttribute('aria-invalid', 'true');
  else promptInput.removeAttribute('aria-invalid');
}

// --- generation

function setGenerating(on) {
  generateButton.disabled = on || !state.model || state.loading !== null || state.kind !== 'lm';
  stopButton.disabled = !on;
  promptInput.readOnly = on;
  allowSpecial.disabled = on || state.kind === 'mlm';
  sampling.setDisabled(on);
  attention.setLive(on);
  masks.setStale(on);
}

async function generate() {
  if (
    state.generation ||
    state.loading !== null ||
    !state.model ||
    state.kind !== 'lm' ||
    stopButton.disabled === false
  )
    return;
  const settings = sampling.read();
  if (!settings.ok) {
    status.set('Check the sampling settings: the message next to the input says what to change.', 'error');
    settings.firstInvalid.focus();
    return;
  }
  setGenerating(true); // at once, so that a second press (or Enter) cannot start another run
  status.set('Preparing…', 'busy');
  let finished;
  state.running = new Promise((resolve) => {
    finished = resolve;
  });
  let generation = null,
    pacer = null;
  const { model, texts } = state;
  try {
    const seq = await promptToContinue(model);
    if (!seq) return;
    await showPromptOnly(model, seq);
    // The logit lens of each step, when the Layers panel is in view as generation starts (it
    // costs an LM head per layer and token).
    const lens = layers.inView ? LENS_TOKENS : undefined;
    generation = new Generation(model, seq.ids.slice(), { ...settings.options, lens, headMask: headMask() });
    state.generation = generation;
    status.set('Generating…', 'busy');
    // The page never holds the engine back: steps wait in `arrived` (the engine runs ahead,
    // wasm/worker.mjs), and each frame the pacer draws appends all of them at once. After Stop
    // nothing more is drawn: what arrived but was not drawn is dropped.
    const arrived = [];
    const drawn = { tokens: 0, last: 0 };
    pacer = new FramePacer((begin) => drawSteps(arrived.splice(0), { seq, texts, generation, drawn, begin }), {
      onError: () => generation.stop(),
    }); // (flush() below reports it)
    const result = await generation.run((step) => {
      arrived.push(step);
      pacer.request();
    });
    await pacer.flush(); // what arrived since the last frame (nothing after a Stop)
    await next.flush();
    // The status line counts what the page showed, timed from the first token to the last shown.
    generation.stats.tokens = drawn.tokens;
    generation.stats.last = drawn.last;
    output.finish(generation.stopped ? '' : result.text);
    if (state.loading === null) status.done(generation.stats, result.stopReason);
  } catch (e) {
    pacer?.cancel();
    await pacer?.settled();
    if (generation) output.finish('');
    status.set(`Generation failed: ${e.message}`, 'error');
  } finally {
    generationEnded();
    finished();
  }
}

// The Sequence of the prompt as the person left it (its tokenization awaited), or null after saying
// why nothing can be generated from it.
async function promptToContinue(model) {
  await (debounce || analyzed !== wanted ? flushPrompt() : chain);
  const seq = state.seq,
    limit = state.shape.positions;
  const refuse = (message) => {
    showPromptError(message);
    status.set('Nothing generated: see the message under the prompt.', 'error');
    promptInput.focus();
    return null;
  };
  if (model !== state.model) return null; // another model was loaded meanwhile
  if (!seq?.promptLength) return refuse('Type a prompt first: the model continues your text.');
  if (seq.promptLength > limit) {
    return refuse(
      `The prompt has ${formatInt(seq.promptLength)} tokens; this model reads at most ${formatInt(limit)}. Shorten it.`,
    );
  }
  return seq;
}

// Every view back to the prompt alone, before a generation appends to it.
async function showPromptOnly(model, seq) {
  seq.truncateToPrompt();
  tokens.truncate(seq.promptLength);
  next.reset();
  layers.truncateToPrompt();
  output.start(await promptSegments(seq.ids, seq.texts, (ids) => model.detokenize(ids)));
  attention.update({ thumbs: true, force: true });
  refreshHighlight();
}

// One frame of a generation: appends the steps that arrived since the last (their chips, their
// text, one heatmap update, the latest next-token chart) and counts them in `drawn`. begin() marks
// where the frame starts changing the page (frame-pacer.mjs).
async function drawSteps(batch, { seq, texts, generation, drawn, begin }) {
  if (!batch.length || generation.stopped) return;
  const batchTexts = await texts.many(batch.map((s) => s.id));
  if (generation.stopped) return;
  begin();
  for (const [i, s] of batch.entries()) {
    seq.addStep(s.id, batchTexts[i], s.position, s.attention, s.windowStart);
    if (s.lens) layers.addStep(s.position, s.id, s.lens);
  }
  tokens.appendMany(batch.map((s, i) => ({ id: s.id, text: batchTexts[i], generated: true })));
  output.appendMany(batch.map((s) => [s.text, s.position]));
  attention.update({ thumbs: true });
  attention.drawLive();
  const selected = tokens.selected;
  if (batch.some((s) => s.position - 1 === selected)) refreshHighlight(); // its row just arrived
  const last = batch.at(-1);
  next
    .show(last, (id) => texts.get(id))
    .catch((e) => status.set(`Cannot show the next-token chart: ${e.message}`, 'error'));
  if (last.lens && selected < 0) layers.show(last.position, (id) => texts.get(id)).catch(() => {}); // the latest, live
  drawn.tokens += batch.length;
  drawn.last = last.arrived;
  status.progress(
    { ...generation.stats, tokens: drawn.tokens, last: drawn.last },
    { force: drawn.tokens === batch.length },
  );
}

// After a generation, finished or not: the controls back, and the views that wait for the engine
// to be idle (restored attention rows, the mask comparison, the prompt's lens, heads off) refreshed.
function generationEnded() {
  const hadFocus = document.activeElement === stopButton;
  state.generation = null;
  setGenerating(false);
  if (hadFocus && !generateButton.disabled) generateButton.focus();
  if (state.loading !== null) status.set(`Loading ${state.loading}…`, 'busy');
  attention.flush();
  refreshHighlight();
  refreshMasks();
  refreshLens();
  refreshComparison();
}

// --- model

const picker = new ModelPicker({
  // The first model's tokenizer, before its weights: the prompt's tokens show at once (a model
  // already loaded keeps showing its own until the next one is ready).
  onTokenizer(tokenizer) {
    if (state.model) return;
    state.tokenizer = tokenizer;
    state.shape = tokenizer.shape;
    state.texts = new TokenTexts(tokenizer);
    showKind(modelKind(tokenizer.config));
    ++wanted;
    flushPrompt();
  },
  onLoading(name, started) {
    state.loading = name;
    masks.clear(masks.on ? `Loading ${name}…` : '');
    state.generation?.stop();
    state.loadStarted = started;
    generateButton.disabled = true;
    status.set(`Loading ${name}…`, 'busy');
  },
  async onLoaded(model, name, example) {
    state.generation?.stop();
    await state.running; // a generation stopped for this load has ended
    state.loading = null;
    const old = state.model;
    state.model = model;
    state.shape = model.shape;
    state.texts = new TokenTexts(model);
    state.tokenizer = null;
    state.seq = null;
    old?.dispose();
    const kind = modelKind(model.config, model);
    // What the page adds to a classifier's prompt, and how a masked LM's mask is written.
    const eot = kind === 'classifier' ? await model.tokenize('<|endoftext|>', { allowSpecial: true }) : [];
    state.endOfText = eot.length === 1 ? eot[0] : null;
    state.maskText = kind === 'mlm' && model.maskTokenId >= 0 ? await model.detokenize([model.maskTokenId]) : null;
    if (example && promptInput.value === state.example) promptInput.value = example; // not edited: this model's
    if (example) state.example = example;
    showKind(kind);
    classifyView.clear('');
    fillMask.clear('');
    const s = model.shape;
    const what =
      kind === 'classifier'
        ? `a classifier (${model.labels.join(', ')})`
        : kind === 'mlm'
          ? 'a masked language model'
          : s.modelType;
    modelInfo.textContent =
      `${name}: ${what}, ${s.layers} layers × ${s.heads} heads, ${s.width} wide, ` +
      `${formatInt(s.positions)} positions, ${formatInt(s.vocabulary)}-token vocabulary; ` +
      `${model.quantize === 'int8' ? 'int8' : 'F32'} weights, ` +
      `${model.threads > 1 ? `${model.threads} threads` : '1 thread (threads need a cross-origin isolated page)'}.`;
    attention.configure(s.layers, s.heads);
    layers.reset(s.layers);
    state.silenced.clear(); // another model's heads
    attention.setSilenced(state.silenced);
    resetHeads.disabled = true;
    setGenerating(false);
    status.set(`Ready: ${name} loaded in ${((performance.now() - state.loadStarted) / 1000).toFixed(1)} s.`, 'done');
    startTrainPanel();
    ++wanted;
    await flushPrompt();
  },
  onFailed(error, name) {
    startTrainPanel();
    state.loading = null;
    state.tokenizer = null; // it ended with its model
    setGenerating(false);
    status.set(`Could not load ${name}: see the message under Model.`, 'error');
  },
});

// --- the Train panel: its code comes once the first model has loaded (or failed to), so that the
// page's first load does not wait for it; its buttons are disabled until then. A model trained
// there joins the Model select when the person presses "Use the trained model", and is loaded
// (not while a generation runs: that goes on with the model it has).

let trainPanel = null;
function startTrainPanel() {
  trainPanel ??= import('./app/train-panel.mjs')
    .then(
      ({ TrainPanel }) =>
        new TrainPanel({
          onTrained: (files, name, { load }) => picker.addTrained(files, name, { load: load && !state.generation }),
        }),
    )
    .catch((e) => status.set(`The Train panel could not start: ${e.message}`, 'error'));
}

// --- events

promptInput.addEventListener('input', promptChanged);
allowSpecial.addEventListener('change', promptChanged);
$('generate-form').addEventListener('submit', (e) => {
  e.preventDefault();
  generate();
});
stopButton.addEventListener('click', () => state.generation?.stop());
// Puts the masked LM's mask at the prompt's cursor (or over its selection).
$('insert-mask').addEventListener('click', () => {
  promptInput.focus();
  promptInput.setRangeText(maskText(), promptInput.selectionStart, promptInput.selectionEnd, 'end');
  promptChanged();
});
resetHeads.addEventListener('click', () => {
  if (state.generation) return status.set('Heads switch off and on between generations: press Stop first.', 'error');
  state.silenced.clear();
  headsChanged();
  next.reset();
});
promptInput.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    if (!generateButton.disabled) generate();
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && state.generation) {
    e.preventDefault();
    state.generation.stop();
  }
});

output.showPlaceholder();
picker.start();
