// glassbox page: wires the modules under app/ together.
//
//   model picker ──loaded──▶ prompt ──tokenize/forward──▶ Sequence ──▶ tokens, attention, output, layers
//                             Generate ──steps──▶ Sequence + output + next-token chart + layers + status
//
// The Train panel (app/train-panel.mjs) trains a GPT in a worker of its own and, when the person
// uses the result, hands it to the model picker as "Trained here". The Experiments region
// (app/experiments-panel.mjs) runs patching, attribution, saliency, steering and neurons on the
// model loaded.
//
// The views follow the kind of model loaded (modelKind): a GPT generates (Output, Next token,
// Layers); a classifier labels the prompt (Classification); a masked LM fills the prompt's masks
// (Fill mask). Tokens and Attention are there for all three.
//
// The engine (web/dist/glassbox.mjs) runs in a Web Worker; every call is async. Everything the
// model produces is put in the page as text (textContent / text nodes), never as HTML.
import { AttentionView } from './app/attention-view.mjs';
import { ClassifyView } from './app/classify-view.mjs';
import { Conversation } from './app/conversation.mjs';
import { formatInt } from './app/dom.mjs';
import { FillMaskView, maskPositions } from './app/fill-mask-view.mjs';
import { FramePacer } from './app/frame-pacer.mjs';
import { Generation } from './app/generation.mjs';
import { LayersView, LENS_TOKENS } from './app/layers-view.mjs';
import { MaskCompare } from './app/mask-compare.mjs';
import { ModelPicker } from './app/model-picker.mjs';
import { NextTokenChart } from './app/next-token.mjs';
import { OutputView, promptSegments } from './app/output-view.mjs';
import { SamplingInputs } from './app/sampling.mjs';
import { Sequence } from './app/sequence.mjs';
import { StatusLine } from './app/status.mjs';
import { parseIds, TokenTexts } from './app/token-text.mjs';
import { TokensView } from './app/tokens-view.mjs';
import { SHIPPED, SHIPPED_MODELS } from './start.mjs';

const $ = (id) => document.getElementById(id);
const promptInput = $('prompt');
const allowSpecial = $('allow-special');
const generateButton = $('generate');
const stopButton = $('stop');
const regenerateButton = $('regenerate');
const promptError = $('prompt-error');
const tokenCount = $('token-count');
const modelInfo = $('model-info');

const state = {
  model: null,
  kind: 'lm', // of the model (modelKind)
  endOfText: null, // a classifier's <|endoftext|> id, which the page puts after the prompt
  example: SHIPPED.example, // the model's example prompt, replaced by the next model's if not edited
  maskText: null, // how a masked LM's mask is written (<|mask|>)
  maskedExample: null, // a masked LM's own example prompt, if it came with one
  tokenizer: null, // the first model's tokenizer, while its weights are still on their way
  shape: null, // the model's sizes as the engine parsed them (model.shape; the tokenizer's before)
  idsOnly: false, // the model has no tokenizer: the prompt is token ids, tokens show as #id
  chat: false, // the model has a chat template: the prompt is the next message of a conversation
  promptProblem: null, // why the prompt cannot be read as token ids (idsOnly), or null
  texts: null, // TokenTexts of the model
  seq: null, // Sequence of the current prompt (+ generated tokens)
  generation: null, // the running Generation
  generating: false, // from Generate until the controls are back (preparing included)
  made: null, // how the generated text shown was made: {seed, segments: [{from, heads}]} (generate())
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
const headNames = (heads = state.silenced) => {
  const names = [...heads].map((k) => k.replace(/^(\d+):(\d+)$/, 'L$1 H$2'));
  return names.length <= 3 ? names.join(', ') : `${names.length} heads`;
};
const headsLabel = (heads = state.silenced) =>
  heads.size > 3 ? headNames(heads) : `head${heads.size > 1 ? 's' : ''} ${headNames(heads)}`;
const headsKey = (heads) => [...heads].sort().join(' ');

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
  for (const id of [
    'output-region',
    'next-region',
    'layers-region',
    'sampling',
    'advanced-sampling',
    'generate-actions',
  ])
    $(id).hidden = !lm;
  $('classify-region').hidden = kind !== 'classifier';
  $('fill-mask-region').hidden = kind !== 'mlm';
  $('mask-switch').hidden = kind === 'mlm'; // its attention is the bidirectional one already
  if (kind === 'mlm' && masks.on) $('mask-switch').click();
  $('prompt-keys').textContent = lm
    ? state.chat
      ? 'Ctrl+Enter sends the message, Escape stops.'
      : 'Ctrl+Enter generates, Escape stops.'
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
  allowSpecial.disabled = kind === 'mlm' || state.idsOnly || state.chat;
  $('tokens-help').textContent =
    'Select a token (click, or Enter/Space; arrow keys move) to see how much it attends to each ' +
    `${kind === 'mlm' ? 'other token (before and after it)' : 'earlier token'} in the chosen layer and head.`;
}

// A model without a tokenizer (no vocab.json and merges.txt) runs on token ids: the prompt box takes
// them (accessible name "Prompt" still; the hint under it says so), and tokens show as #id.
const IDS_EXAMPLE = '1, 2, 3, 4, 5';
function showIdsOnly(on, vocabulary) {
  state.idsOnly = on;
  state.promptProblem = null;
  $('prompt-ids').hidden = !on;
  $('prompt-ids').textContent = on
    ? `This model has no tokenizer: type token ids (0 to ${formatInt(vocabulary - 1)}) separated by commas; its tokens show as #id.`
    : '';
  promptInput.placeholder = on ? 'Token ids, e.g. 1, 2, 3' : '';
  allowSpecial.disabled = on || state.kind === 'mlm' || state.chat;
}

// A model's generation_config.json gives its own sampling settings (do_sample false: greedy): they go
// in the inputs, where the person can change them; a model without one leaves the inputs as they are.
function showGenerationConfig({ doSample, temperature, topK, topP }) {
  const own = { temperature: doSample === false ? 0 : temperature, topK, topP };
  const given = Object.values(own).some((v) => v !== undefined);
  if (given) sampling.set(own);
  $('sampling-source').hidden = !given;
}

// A model with a chat template talks: the Prompt box holds the next message of a conversation
// (conversation.mjs), which the template renders with its special tokens, always read as tokens.
const CHAT_EXAMPLE = 'Write a short poem about attention.';
function showChat(on) {
  state.chat = on;
  conversation.show(on);
  if (on) promptInput.placeholder = 'Your message';
  allowSpecial.disabled = on || state.kind === 'mlm' || state.idsOnly;
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
const conversation = new Conversation({
  root: $('conversation'),
  system: $('system-prompt'),
  list: $('turns'),
  newButton: $('new-conversation'),
  onChange: () => promptChanged(),
});
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
  textOf: (id) => state.texts.get(id),
  headMask: () => headMask(),
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
  ++wanted; // the prompt's attention and layers again, with the mask (now or before the next run)
  // A running generation goes on with these heads from its next token (generate()).
  if (state.generating) return state.generation?.switchHeads();
  // Generated text stays, labelled with the heads it was made with (the prompt is read again
  // before the next generation); the Next token chart compares the heads after its last token.
  if (keptOutput()) {
    showMade();
    if (!state.silenced.size) next.restore(); // the last step's chart: no heads to compare
    return refreshComparison();
  }
  flushPrompt().then(refreshComparison);
}

// Whether the Output shows generated text (kept until the prompt changes or the next generation).
const keptOutput = () => state.kind === 'lm' && state.made !== null && state.seq?.length > state.seq?.promptLength;

// Under the Output: with which heads its text was made (and from which generated token, when they
// changed during the generation), and, when other heads are off now, a button that generates again
// with them, with the same seed.
function showMade() {
  const made = keptOutput() || state.generating ? state.made : null;
  const segments = made?.segments.filter((s, i, all) => i === 0 || headsKey(s.heads) !== headsKey(all[i - 1].heads));
  const now = headsKey(state.silenced),
    differs = !!segments && !state.generating && headsKey(segments.at(-1).heads) !== now;
  const show = !!segments && (segments.length > 1 || segments[0].heads.size > 0 || differs);
  $('output-heads').hidden = !show;
  regenerateButton.hidden = !differs;
  if (!show) return;
  const prompt = state.seq.promptLength;
  const withHeads = (heads) => (heads.size ? `without ${headNames(heads)}` : 'with every head');
  $('output-note').textContent =
    `${state.generating ? 'Generating' : 'Made'} ${withHeads(segments[0].heads)}` +
    segments
      .slice(1)
      .map((s) => `, then ${withHeads(s.heads)} from generated token ${s.from - prompt + 1}`)
      .join('') +
    '.' +
    (differs
      ? ` ${state.silenced.size ? `${headsLabel()[0].toUpperCase()}${headsLabel().slice(1)} off now.` : 'Every head on now.'}`
      : '');
  regenerateButton.textContent = `Generate again ${withHeads(state.silenced)}`;
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
      await next.compare(position, all.logits, masked.logits, label, (id) => texts.get(id));
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

// The prompt of a model without a tokenizer, read as token ids: [] (and state.promptProblem, shown
// under the prompt) when it is not ids.
function promptIds() {
  const read = parseIds(promptInput.value, state.shape.vocabulary);
  state.promptProblem = read.error ?? null;
  return read.ids ?? [];
}

// The conversation, with the Prompt box's message as the user's next turn, as the model reads it:
// rendered by its chat template, every special token in the rendered text read as one (as
// transformers' apply_chat_template(tokenize=True) does). [] (and state.promptProblem, shown under
// the prompt) when the template refuses the conversation.
async function conversationIds(model) {
  state.promptProblem = null;
  try {
    return await model.tokenize(await conversation.render(model, promptInput.value), { allowSpecial: true });
  } catch (e) {
    state.promptProblem = `The chat template cannot render this conversation: ${e.message}`;
    return [];
  }
}

async function analyzePrompt(v) {
  // This model's, even if another loads meanwhile. Before the first model is ready, its tokenizer
  // alone (onTokenizer): the tokens show, the attention comes with the model.
  const { model, tokenizer, texts: tokenTexts, kind } = state;
  if (v !== wanted || !(model ?? tokenizer)) return;
  const ids = state.idsOnly
    ? promptIds()
    : state.chat && model
      ? await conversationIds(model)
      : await (model ?? tokenizer).tokenize(promptInput.value, { allowSpecial: allowSpecial.checked });
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
      : (state.promptProblem ?? ''),
  );
  if (!model) return; // the tokenizer alone: the rest comes with the model (onLoaded reads the prompt again)
  next.reset();
  output.showPlaceholder();
  state.made = null;
  showMade();
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
    fillMask.clear(`Type a text with ${maskText()} where the model should guess a token, or `, useMaskedExample);
  }
  if (!ids.length) {
    if (masks.on) await masks.compute(model, state.shape, ids);
    return;
  }
  // With the Layers panel in view, the same pass gives the prompt's logit lens; a masked LM's
  // pass gives its guesses (the logits at its masks' rows alone); a classifier's, its label.
  const withLens = kind === 'lm' && layers.inView,
    maskRows = kind === 'mlm' ? maskPositions(ids, model.maskTokenId) : [],
    classifying = kind === 'classifier' && promptInput.value !== '';
  const pass = classifying
    ? await model.classify(ids, { attention: true, headMask: headMask() })
    : await model.forward(ids, {
        attention: true,
        logits: maskRows.length ? maskRows : false,
        lens: withLens ? LENS_TOKENS : undefined,
        headMask: headMask(),
      });
  const { attention: matrix, lens, logits } = pass;
  if (!stillWanted(v, model)) return;
  seq.setPromptAttention(matrix);
  if (lens) await layers.setPrompt(ids, texts, lens, (id) => state.texts.get(id));
  attention.update({ thumbs: true, force: true });
  refreshHighlight();
  if (classifying) await showClassification(model, ids, v, pass);
  if (kind === 'mlm' && !maskRows.length && promptInput.value) showNoMask();
  if (maskRows.length)
    await fillMask.show(ids, maskRows, logits, {
      textOf: (id) => state.texts.get(id),
      detokenize: (x) => model.detokenize(x),
    });
  if (masks.on) await masks.compute(model, state.shape, ids);
}

// The classifier's verdict on ids (the prompt's, then <|endoftext|>): result, of the pass that
// gave the attention, with the heads switched off and, if any are, with every head too.
async function showClassification(model, ids, v, result) {
  const mask = headMask();
  const all = mask ? await model.classify(ids) : null;
  if (!stillWanted(v, model)) return;
  classifyView.show(result, all, mask ? headsLabel() : '');
}

// The masked LM's mask as written in a prompt (<|mask|>).
const maskText = () => state.maskText ?? '<|mask|>';

// A masked LM's example prompt: its own (a shipped model's), or for another masked LM the shipped
// one's, written with this model's mask.
const maskedExample = () =>
  state.maskedExample ??
  SHIPPED_MODELS.find((m) => m.value === 'shipped:brown-mlm').example.replaceAll('<|mask|>', maskText());

// A masked LM's example in the prompt, in one click (the button after a message that the prompt
// has no mask).
const useMaskedExample = {
  label: 'Use an example',
  run: () => {
    promptInput.value = maskedExample();
    promptInput.focus();
    promptChanged();
  },
};
const showNoMask = () =>
  fillMask.clear(
    `The prompt has no mask: write ${maskText()} where the model should guess a token, press Insert a mask, or `,
    useMaskedExample,
  );

function showPromptError(message) {
  promptError.textContent = message;
  promptError.hidden = !message;
  if (message) promptInput.setAttribute('aria-invalid', 'true');
  else promptInput.removeAttribute('aria-invalid');
}

// --- generation

function setGenerating(on) {
  state.generating = on;
  $('generate-actions').classList.toggle('running', on);
  regenerateButton.disabled = on;
  generateButton.disabled = on || !state.model || state.loading !== null || state.kind !== 'lm';
  stopButton.disabled = !on;
  promptInput.readOnly = on;
  allowSpecial.disabled = on || state.kind === 'mlm' || state.idsOnly || state.chat;
  conversation.setDisabled(on);
  sampling.setDisabled(on);
  attention.setLive(on);
  masks.setStale(on);
}

// seed: this seed rather than the Seed input's (Generate again repeats the last generation's).
async function generate({ seed } = {}) {
  if (state.generating || state.loading !== null || !state.model || state.kind !== 'lm') return;
  const settings = sampling.read();
  if (!settings.ok) {
    status.set('Check the sampling settings: the message next to the input says what to change.', 'error');
    const advanced = settings.firstInvalid.closest('details');
    if (advanced) advanced.open = true; // (Top-k and Top-p are under Advanced)
    settings.firstInvalid.focus();
    return;
  }
  // Focus follows the button pressed to Stop (and back to Generate when done), never away from
  // where someone is typing.
  const pressed = [generateButton, regenerateButton].includes(document.activeElement);
  setGenerating(true); // at once, so that a second press (or Enter) cannot start another run
  if (pressed) stopButton.focus();
  status.set('Preparing…', 'busy');
  let finished;
  state.running = new Promise((resolve) => {
    finished = resolve;
  });
  let generation = null,
    pacer = null;
  const { model, texts } = state;
  const message = state.chat ? promptInput.value : null; // (read-only until the run ends)
  try {
    const seq = await promptToContinue(model);
    if (!seq) return;
    await showPromptOnly(model, seq);
    showOutputWhileGenerating();
    // The logit lens of each step, when the Layers panel is in view as generation starts (it
    // costs an LM head per layer and token).
    const lens = layers.inView ? LENS_TOKENS : undefined;
    const options = { ...settings.options, lens };
    // One seed for the whole run, so that the status line can show it and Generate again repeat it.
    options.seed = seed ?? options.seed ?? Math.floor(Math.random() * 2 ** 32);
    state.made = { seed: options.seed, segments: [] };
    const drawn = { tokens: 0, last: 0 };
    let stats = null,
      result;
    status.set('Generating…', 'busy');
    // A head switched off or on during the run ends the engine's generation at its next step; the
    // run goes on from the tokens shown (prompt + generated, at most one context of them) with the
    // new heads and what is left of Max tokens.
    for (;;) {
      const from = Math.max(0, seq.length - state.shape.positions);
      state.made.segments.push({ from: seq.length, heads: new Set(state.silenced) });
      showMade();
      generation = new Generation(model, seq.ids.slice(from), {
        ...options,
        maxTokens: options.maxTokens - drawn.tokens,
        headMask: headMask(),
      });
      state.generation = generation;
      stats ??= generation.stats;
      // the status line's figures: the whole run's, from its start
      const live = () => ({
        ...stats,
        first: stats.first ?? generation.stats.first,
        tokens: drawn.tokens,
        last: drawn.last,
      });
      // The page never holds the engine back: steps wait in `arrived` (the engine runs ahead,
      // wasm/worker.mjs), and each frame the pacer draws appends all of them at once. After Stop
      // nothing more is drawn: what arrived but was not drawn is dropped.
      const arrived = [],
        before = drawn.tokens;
      let steps = 0;
      pacer = new FramePacer((begin) => drawSteps(arrived.splice(0), { seq, texts, generation, drawn, begin, live }), {
        onError: () => generation.stop(),
      }); // (flush() below reports it)
      result = await generation.run((step) => {
        // positions in the whole sequence (a run after a head switch starts at `from`)
        step.position += from;
        step.windowStart = (step.windowStart ?? 0) + from;
        ++steps;
        arrived.push(step);
        pacer.request();
      });
      await pacer.flush(); // what arrived since the last frame (nothing after a Stop)
      stats.first ??= generation.stats.first;
      const endedFirst = result.stopReason !== 'cancelled' && drawn.tokens - before === steps; // before the switch
      if (!generation.switching || endedFirst || drawn.tokens >= options.maxTokens) break;
      output.mark(state.silenced.size ? `without ${headNames()}` : 'every head');
    }
    await next.flush();
    // The status line counts what the page showed, timed from the first token to the last shown.
    output.finish(generation.stopped ? '' : result.text);
    if (message !== null && model === state.model) await replied(model, seq, message);
    if (state.loading === null) status.done({ ...stats, tokens: drawn.tokens, last: drawn.last }, result.stopReason);
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

// The message and the reply (the tokens generated, all of them or up to Stop) become turns of the
// conversation, and the Prompt box is ready for the next message. The views keep showing the
// generation until the next message (or the system prompt) is written.
async function replied(model, seq, message) {
  const reply = await model.detokenize(seq.ids.slice(seq.promptLength));
  conversation.add(message, reply);
  promptInput.value = '';
}

// "Generate again" in a conversation replies to the last message again: that turn is taken back.
function retakeLastTurn() {
  const message = conversation.takeLast();
  if (message === null) return;
  promptInput.value = message;
  promptChanged();
}

// On a narrow screen the Output is below the settings: it is scrolled into view as a generation
// starts (Stop stays at the bottom of the screen meanwhile, style.css).
function showOutputWhileGenerating() {
  if (!matchMedia('(max-width: 600px)').matches) return;
  const box = $('output-region').getBoundingClientRect();
  if (box.top < 0 || box.top > innerHeight / 2) $('output-region').scrollIntoView({ block: 'start' });
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
  if (state.chat && !promptInput.value.trim()) return refuse('Write a message first: the model replies to it.');
  if (!seq?.promptLength)
    return refuse(
      state.promptProblem ??
        (state.idsOnly
          ? 'Type token ids first (e.g. 1, 2, 3): the model continues them.'
          : 'Type a prompt first: the model continues your text.'),
    );
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
  output.start(
    state.idsOnly
      ? seq.texts.slice(0, seq.promptLength).map((text, i) => ({ text: i ? ` ${text}` : text, positions: [i] }))
      : await promptSegments(seq.ids, seq.texts, (ids) => model.detokenize(ids)),
  );
  attention.update({ thumbs: true, force: true });
  refreshHighlight();
}

// One frame of a generation: appends the steps that arrived since the last (their chips, their
// text, one heatmap update, the latest next-token chart) and counts them in `drawn`. begin() marks
// where the frame starts changing the page (frame-pacer.mjs).
async function drawSteps(batch, { seq, texts, generation, drawn, begin, live }) {
  if (!batch.length || generation.stopped) return;
  const batchTexts = await texts.many(batch.map((s) => s.id));
  if (generation.stopped) return;
  begin();
  for (const [i, s] of batch.entries()) {
    seq.addStep(s.id, batchTexts[i], s.position, s.attention, s.windowStart);
    if (s.lens) layers.addStep(s.position, s.id, s.lens);
  }
  tokens.appendMany(batch.map((s, i) => ({ id: s.id, text: batchTexts[i], generated: true })));
  // (a model without a tokenizer gives no text: its tokens are written as ids)
  output.appendMany(batch.map((s, i) => [state.idsOnly ? ` ${batchTexts[i]}` : s.text, s.position]));
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
  status.progress(live(), { force: drawn.tokens === batch.length });
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
  showMade();
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
    tokens.setSpecial(model.specialTokenIds);
    state.tokenizer = null;
    state.seq = null;
    old?.dispose();
    showIdsOnly(!model.hasTokenizer, model.shape.vocabulary);
    showChat(model.hasChatTemplate);
    showGenerationConfig(model.generationConfig);
    const kind = modelKind(model.config, model);
    // What the page adds to a classifier's prompt, and how a masked LM's mask is written.
    const text = model.hasTokenizer; // (without one, the prompt is ids: the page adds none)
    const eot = kind === 'classifier' && text ? await model.tokenize('<|endoftext|>', { allowSpecial: true }) : [];
    state.endOfText = eot.length === 1 ? eot[0] : null;
    state.maskText =
      kind === 'mlm' && text && model.maskTokenId >= 0 ? await model.detokenize([model.maskTokenId]) : null;
    state.maskedExample = kind === 'mlm' ? example : null;
    if (kind === 'mlm') example ??= maskedExample(); // a masked LM's example has a mask, whatever its source
    if (state.idsOnly)
      example = IDS_EXAMPLE; // (a model without a tokenizer reads ids)
    else if (state.chat) example = CHAT_EXAMPLE;
    else if (state.example === IDS_EXAMPLE || state.example === CHAT_EXAMPLE) example ??= SHIPPED.example;
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
    const kv = s.kvHeads < s.heads ? ` (${s.kvHeads} KV head${s.kvHeads === 1 ? '' : 's'})` : '';
    modelInfo.textContent =
      `${name}: ${what}, ${s.layers} layers × ${s.heads} heads${kv}, ${s.width} wide, ` +
      `${formatInt(s.positions)} positions, ${formatInt(s.vocabulary)}-token vocabulary` +
      `${state.idsOnly ? ', no tokenizer (it reads token ids)' : ''}` +
      `${state.chat ? ', a chat template (it talks)' : ''}; ` +
      `${model.quantize === 'int8' || model.quantize === 'int4' ? model.quantize : 'F32'} weights, ` +
      `${model.threads > 1 ? `${model.threads} threads` : '1 thread (threads need a cross-origin isolated page)'}.`;
    attention.configure(s.layers, s.heads, s.kvHeads);
    layers.reset(s.layers);
    state.silenced.clear(); // another model's heads
    attention.setSilenced(state.silenced);
    resetHeads.disabled = true;
    setGenerating(false);
    status.set(`Ready: ${name} loaded in ${((performance.now() - state.loadStarted) / 1000).toFixed(1)} s.`, 'done');
    startTrainPanel();
    startExperiments().then((panel) => {
      if (model === state.model) panel?.setModel({ model, texts: state.texts, idsOnly: state.idsOnly, shape: s, kind });
    });
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
// there joins the Model select when the person presses "Use the trained model", and is loaded (a
// generation under way stops first, as for any model chosen).

let trainPanel = null;
function startTrainPanel() {
  trainPanel ??= import('./app/train-panel.mjs')
    .then(
      ({ TrainPanel }) =>
        new TrainPanel({
          onTrained: (files, name, { load }) => picker.addTrained(files, name, { load }),
        }),
    )
    .catch((e) => status.set(`The Train panel could not start: ${e.message}`, 'error'));
}

// --- the Experiments region (patching, attribution, saliency, steering, neurons): its code comes
// with the first model, as the Train panel's does; the region shows for a GPT.

let experiments = null;
function startExperiments() {
  experiments ??= import('./app/experiments-panel.mjs')
    .then(({ ExperimentsPanel }) => new ExperimentsPanel())
    .catch((e) => status.set(`The Experiments region could not start: ${e.message}`, 'error'));
  return experiments;
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
  state.silenced.clear();
  headsChanged();
  next.reset();
});
regenerateButton.addEventListener('click', () => {
  if (state.chat && !state.generating) retakeLastTurn();
  generate({ seed: state.made?.seed });
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
