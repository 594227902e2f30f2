// The Experiments region: activation patching, direct logit attribution, saliency, steering and
// neurons on the model loaded (the JS API's model.patch, model.attribute, forward's { saliency },
// generate's { steer } and forward's { neurons, neuron }), one tab each. The clean text, the
// corrupted one, the answer and the wrong answer are shared by the tabs; steering has its own.
// One experiment runs at a time; a new model stops it and clears the results. Each result can be
// copied as JSON (patching and attribution in the CLI's format, the same keys and numbers).
//
// app.mjs imports this module once the first model is in, so that the page's start loads nothing
// of it. Everything the model produces goes in as text.
import { AttributionView } from './attribution-view.mjs';
import { el } from './dom.mjs';
import { NeuronsView } from './neurons-view.mjs';
import { PatchingView, SITES } from './patching-view.mjs';
import { ScoreChips } from './score-chips.mjs';
import { parseIds, spokenText } from './token-text.mjs';

const $ = (id) => document.getElementById(id);

// The examples: TransformerLens's indirect-object task, and a classic steering pair.
const TEXT_EXAMPLE = {
  clean: 'When Mary and John went to the store, John gave a drink to',
  corrupted: 'When Mary and John went to the store, Mary gave a drink to',
  answer: ' Mary',
  wrong: ' John',
  steerPrompt: 'I think that you are',
  plus: 'I love it',
  minus: 'I hate it',
};
// A model without a tokenizer reads ids (made-up ones: such a model is a test's or a fresh one).
const IDS_EXAMPLE = {
  clean: '5, 9, 12, 7, 3, 9',
  corrupted: '5, 9, 12, 7, 3, 12',
  answer: '#12',
  wrong: '#9',
  steerPrompt: '5, 9, 12',
  plus: '7',
  minus: '3',
};
const NEURONS_K = 5; // neurons shown per layer
const STEER_TOKENS = 20; // tokens each steering generation writes

// A problem with what the person typed, shown in the tab's error box (not the library's error).
class InputProblem extends Error {}

export class ExperimentsPanel {
  #region = $('experiments-region');
  #fields = {
    clean: $('exp-clean'),
    corrupted: $('exp-corrupted'),
    answer: $('exp-answer'),
    wrong: $('exp-wrong'),
    steerPrompt: $('exp-steer-prompt'),
    plus: $('exp-steer-plus'),
    minus: $('exp-steer-minus'),
    layer: $('exp-steer-layer'),
    coefficient: $('exp-steer-coefficient'),
  };
  #tabs = [...this.#region.querySelectorAll('[role=tab]')];
  #current = null; // {model, texts, idsOnly, shape}
  #example = null; // the example the fields were filled with (replaced by the next model's if not edited)
  #busy = null; // {tab, controller} of the experiment running
  #json = new Map(); // tab panel id -> what Copy JSON copies
  #patching = new PatchingView($('exp-patch-grids'));
  #attribution = new AttributionView($('exp-attr-result'));
  #neurons = new NeuronsView($('exp-neur-result'), {
    activation: (layer, index) => this.#neuronActivation(layer, index),
    onNeuron: ({ layer, index, values }) => {
      const json = this.#json.get('exp-neurons');
      if (json) json.neuron = { layer, index, values: Array.from(values) };
    },
    onError: (e) => this.#fail(this.#panel('exp-neurons'), e),
  });

  constructor() {
    for (const tab of this.#tabs) {
      tab.addEventListener('click', () => this.#select(tab));
      tab.addEventListener('keydown', (e) => this.#tabKey(e, tab));
    }
    $('exp-patch-run').addEventListener('click', () => this.#runPatching());
    $('exp-patch-stop').addEventListener('click', () =>
      this.#busy?.controller.abort(new DOMException('Stopped', 'AbortError')),
    );
    $('exp-attr-run').addEventListener('click', () => this.#runAttribution());
    $('exp-sal-run').addEventListener('click', () => this.#runSaliency());
    $('exp-steer-run').addEventListener('click', () => this.#runSteering());
    $('exp-neur-run').addEventListener('click', () => this.#runNeurons());
    for (const button of this.#region.querySelectorAll('.exp-copy'))
      button.addEventListener('click', () => this.#copy(button.closest('[role=tabpanel]')));
    for (const field of Object.values(this.#fields))
      field.addEventListener('input', () => field.removeAttribute('aria-invalid'));
  }

  // A model is in (kind: 'lm', 'classifier' or 'mlm': the region is a GPT's). Stops what runs,
  // clears the results, and puts this model's example in the fields the person has not edited.
  setModel({ model, texts, idsOnly, shape, kind }) {
    this.#busy?.controller.abort(new DOMException('Another model was loaded', 'AbortError'));
    this.#current = { model, texts, idsOnly, shape };
    this.#region.hidden = kind !== 'lm';
    const example = idsOnly ? IDS_EXAMPLE : TEXT_EXAMPLE;
    const fields = this.#fields;
    for (const key of Object.keys(example))
      if (!this.#example || fields[key].value === this.#example[key]) fields[key].value = example[key];
    this.#example = example;
    const layer = Math.floor(shape.layers / 3);
    fields.layer.max = String(shape.layers - 1);
    if (!(Number(fields.layer.value) < shape.layers) || !fields.layer.dataset.edited)
      fields.layer.value = String(layer);
    fields.layer.addEventListener('input', () => (fields.layer.dataset.edited = '1'), { once: true });
    this.#patching.clear();
    this.#attribution.clear();
    this.#neurons.clear();
    $('exp-sal-result').replaceChildren();
    $('exp-plain').replaceChildren();
    $('exp-steered').replaceChildren();
    $('exp-patch-progress').hidden = true;
    this.#json.clear();
    for (const panel of this.#region.querySelectorAll('[role=tabpanel]')) {
      this.#status(panel, '');
      this.#error(panel, null);
    }
    this.#setBusy(null);
  }

  // --- the experiments

  async #runPatching() {
    const panel = this.#panel('exp-patching');
    await this.#run(panel, async ({ model, texts, shape }, signal) => {
      const [clean, corrupted] = [
        await this.#ids('clean', 'Clean text'),
        await this.#ids('corrupted', 'Corrupted text'),
      ];
      const answer = this.#tok('answer', 'Answer'),
        wrong = this.#tok('wrong', 'Wrong answer');
      const [cleanTexts, corruptedTexts] = [await texts.many(clean), await texts.many(corrupted)];
      const progress = $('exp-patch-progress');
      progress.value = 0;
      progress.hidden = false;
      let grids = false; // drawn once the lengths are known to match (the API says why not)
      const start = performance.now();
      const result = await model.patch({
        clean,
        corrupted,
        answer,
        wrong,
        signal,
        onProgress: ({ site, layer, row, done, total }) => {
          if (!grids) {
            this.#patching.start({
              layers: shape.layers,
              heads: shape.heads,
              clean: cleanTexts,
              corrupted: corruptedTexts,
            });
            grids = true;
          }
          this.#patching.setRow(site, layer, row);
          progress.max = total;
          progress.value = done;
          this.#status(panel, `Patching… ${site}, layer ${layer}: ${done} of ${total} layers done.`, 'busy');
        },
      });
      if (!grids)
        this.#patching.start({
          layers: shape.layers,
          heads: shape.heads,
          clean: cleanTexts,
          corrupted: corruptedTexts,
        });
      this.#patching.finish(result);
      progress.max = 1;
      progress.value = 1;
      const json = { clean: result.clean, corrupted: result.corrupted };
      for (const { site, key } of SITES) if (result[key]) json[site] = result[key].map((row) => Array.from(row));
      json.tokens = result.tokens;
      this.#json.set(panel.id, json);
      this.#status(
        panel,
        `Done in ${seconds(start)}: ${await this.#metric(answer, wrong)} is ${result.clean.toFixed(3)} on the clean text, ` +
          `${result.corrupted.toFixed(3)} on the corrupted one.`,
        'done',
      );
    });
  }

  async #runAttribution() {
    const panel = this.#panel('exp-attribution');
    await this.#run(panel, async ({ model }) => {
      const prompt = await this.#ids('clean', 'Clean text');
      const answer = this.#tok('answer', 'Answer'),
        wrong = this.#tok('wrong', 'Wrong answer', { optional: true });
      const start = performance.now();
      const result = await model.attribute({ prompt, answer, wrong });
      this.#attribution.show(result, await this.#metric(answer, wrong));
      this.#json.set(panel.id, {
        embed: result.embed,
        pos_embed: result.posEmbed,
        heads: result.heads.map((row) => Array.from(row)),
        mlp: Array.from(result.mlp),
        bias: result.bias,
        total: result.total,
        residual: result.residual,
      });
      this.#status(panel, `Done in ${seconds(start)}.`, 'done');
    });
  }

  async #runSaliency() {
    const panel = this.#panel('exp-saliency');
    await this.#run(panel, async ({ model, texts }) => {
      const ids = await this.#ids('clean', 'Clean text');
      const target = this.#tok('answer', 'Answer', { optional: true });
      const start = performance.now();
      const result = await model.forward(ids, { saliency: true, target, logits: false });
      const tokenTexts = await texts.many(ids);
      const chips = new ScoreChips({ texts: tokenTexts, name: 'Saliency' });
      chips.tint(result.saliency);
      const targetText = await texts.get(result.target);
      $('exp-sal-result').replaceChildren(
        el('p', { className: 'small' }, `Saliency of log p(${spokenText(targetText)}) after the prompt:`),
        chips.element,
      );
      this.#json.set(panel.id, { tokens: ids, saliency: Array.from(result.saliency), target: result.target });
      this.#status(panel, `Done in ${seconds(start)}.`, 'done');
    });
  }

  async #runSteering() {
    const panel = this.#panel('exp-steering');
    await this.#run(panel, async ({ model, shape }, signal) => {
      const prompt = await this.#ids('steerPrompt', 'Text to continue');
      const plus = await this.#ids('plus', 'Steer toward'),
        minus = await this.#ids('minus', 'Steer away from');
      const layer = this.#number('layer', 'Steering layer', { integer: true, min: 0, max: shape.layers - 1 });
      const coefficient = this.#number('coefficient', 'Coefficient');
      const steer = { layer, coefficient, plus, minus };
      const start = performance.now();
      const options = { maxTokens: STEER_TOKENS, temperature: 0, signal };
      const plain = await this.#stream(model, prompt, options, $('exp-plain'));
      const steered = await this.#stream(model, prompt, { ...options, steer }, $('exp-steered'));
      this.#json.set(panel.id, {
        prompt,
        steer: { layer, coefficient, plus, minus },
        plain: { ids: plain.ids, text: plain.text },
        steered: { ids: steered.ids, text: steered.text },
      });
      this.#status(
        panel,
        `Done in ${seconds(start)}: ${plain.text === steered.text ? 'the same text both ways' : 'the steering changed the text'}.`,
        'done',
      );
    });
  }

  async #runNeurons() {
    const panel = this.#panel('exp-neurons');
    await this.#run(panel, async ({ model, texts }) => {
      const ids = await this.#ids('clean', 'Clean text');
      const start = performance.now();
      const result = await model.forward(ids, { neurons: NEURONS_K, logits: false });
      this.#neuronIds = ids;
      this.#neurons.show(await texts.many(ids), result.neurons);
      this.#json.set(panel.id, { tokens: ids, neurons: result.neurons });
      this.#status(panel, `Done in ${seconds(start)}.`, 'done');
    });
  }

  #neuronIds = null;
  async #neuronActivation(layer, index) {
    const { model } = this.#current;
    const result = await model.forward(this.#neuronIds, { neuron: { layer, index }, logits: false });
    return result.neuron;
  }

  // A generation's text streamed into `out` after the prompt's (muted) -> {ids, text}.
  async #stream(model, prompt, options, out) {
    out.replaceChildren(el('span', { className: 'prompt-text' }, await model.detokenize(prompt)));
    const generated = el('span', { className: 'generated-text' });
    out.append(generated);
    const ids = [];
    let text = '';
    for await (const step of model.generate(prompt, options)) {
      ids.push(step.id);
      text += step.text;
      generated.append(step.text);
    }
    return { ids, text };
  }

  // --- running one experiment at a time

  async #run(panel, body) {
    if (this.#busy || !this.#current) return;
    const controller = new AbortController(),
      current = this.#current;
    this.#setBusy({ tab: panel.id, controller });
    this.#error(panel, null);
    this.#status(panel, 'Running…', 'busy');
    this.#json.delete(panel.id);
    panel.querySelector('.exp-copy').disabled = true;
    try {
      await body(current, controller.signal);
    } catch (e) {
      if (this.#current !== current) return; // another model: its setModel cleared the panel
      if (controller.signal.aborted)
        this.#status(panel, 'Stopped: the grids show the layers done before Stop.', 'done');
      else this.#fail(panel, e);
    } finally {
      if (this.#current === current) this.#setBusy(null);
    }
  }

  #setBusy(busy) {
    this.#busy = busy;
    for (const button of this.#region.querySelectorAll('button.primary')) button.disabled = !!busy || !this.#current;
    $('exp-patch-stop').disabled = busy?.tab !== 'exp-patching';
    for (const panel of this.#region.querySelectorAll('[role=tabpanel]'))
      panel.querySelector('.exp-copy').disabled = !!busy || !this.#json.has(panel.id);
  }

  // The library's message as it is, after what failed ("Patching failed: the clean prompt has 5
  // tokens and the corrupted one 6: ..."); a problem with a field is the field's message alone.
  #fail(panel, e) {
    this.#status(panel, '');
    const name = $(panel.getAttribute('aria-labelledby')).textContent.trim();
    this.#error(panel, e instanceof InputProblem ? e.message : `${name} failed: ${e.message}`);
  }

  // --- reading the fields

  // A field's prompt as token ids (read by the tokenizer, or as ids by a model without one).
  async #ids(key, name) {
    const field = this.#fields[key],
      { model, idsOnly, shape } = this.#current;
    const text = field.value;
    if (!text.trim()) throw this.#problem(field, `${name}: write ${idsOnly ? 'token ids' : 'a text'} first.`);
    if (!idsOnly) return model.tokenize(text);
    const { ids, error } = parseIds(text, shape.vocabulary);
    if (error) throw this.#problem(field, `${name}: ${error}`);
    return ids;
  }

  // A field's token as the API takes it: "#id" (or, for a model without a tokenizer, an id) is the
  // id; anything else the token's text, which the library checks is one token. optional: an empty
  // field gives undefined.
  #tok(key, name, { optional = false } = {}) {
    const field = this.#fields[key],
      text = field.value;
    if (text === '') {
      if (optional) return undefined;
      throw this.#problem(field, `${name}: write a token (its text, or # and its id).`);
    }
    const id = this.#current.idsOnly ? /^\s*#?(\d+)\s*$/.exec(text) : /^#(\d+)$/.exec(text);
    if (id) return Number(id[1]);
    if (this.#current.idsOnly)
      throw this.#problem(field, `${name}: this model has no tokenizer: write a token id, e.g. #12.`);
    return text;
  }

  #number(key, name, { integer = false, min = -Infinity, max = Infinity } = {}) {
    const field = this.#fields[key],
      v = field.value.trim() === '' ? NaN : Number(field.value);
    if (!Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
      const range = Number.isFinite(min) ? ` from ${min} to ${max}` : '';
      throw this.#problem(field, `${name}: write ${integer ? 'a whole number' : 'a number'}${range}.`);
    }
    return v;
  }

  #problem(field, message) {
    field.setAttribute('aria-invalid', 'true');
    return new InputProblem(message);
  }

  // "logit(“ Mary”) − logit(“ John”)" (or of the answer alone).
  async #metric(answer, wrong) {
    const name = async (t) => spokenText(typeof t === 'number' ? await this.#current.texts.get(t) : t);
    return wrong === undefined
      ? `logit(${await name(answer)})`
      : `logit(${await name(answer)}) − logit(${await name(wrong)})`;
  }

  // --- tabs, status, errors, Copy JSON

  #panel(id) {
    return $(id);
  }

  #select(tab) {
    for (const t of this.#tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute('aria-controls')).hidden = !on;
    }
  }

  #tabKey(e, tab) {
    const i = this.#tabs.indexOf(tab),
      n = this.#tabs.length;
    const to = { ArrowLeft: (i + n - 1) % n, ArrowRight: (i + 1) % n, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    this.#select(this.#tabs[to]);
    this.#tabs[to].focus();
  }

  #status(panel, text, kind = '') {
    const line = panel.querySelector('.exp-status');
    line.textContent = text;
    line.dataset.kind = kind;
  }

  #error(panel, message) {
    const box = panel.querySelector('.exp-error');
    box.hidden = message === null;
    box.textContent = message ?? '';
  }

  async #copy(panel) {
    const json = this.#json.get(panel.id);
    if (!json) return;
    try {
      await navigator.clipboard.writeText(JSON.stringify(json));
      this.#status(panel, 'Copied the result as JSON.', 'done');
    } catch (e) {
      this.#error(panel, `Could not copy: ${e.message}`);
    }
  }
}

const seconds = (start) => `${((performance.now() - start) / 1000).toFixed(1)} s`;
