// The "Train" panel: a GPT trained in this tab on the person's text (pasted, dropped as .txt files,
// or a bundled sample of the Brown corpus), with its loss falling on a chart, a sample and the
// attention maps of the model as it is every few steps (made in the training worker), and the
// result offered once it stops: "Use the trained model" puts it in the Model select ("Trained
// here") for every other view, "Download model" saves its four files as one .zip.
//
// "Compare one head and many" trains two models that differ only in n_head (1, and the settings'
// count) on the same text with the same seed, side by side: their two loss curves share the chart
// and their attention maps are drawn for the same probe text.
//
// Stop pauses the run(s); Train (or Compare) with the same text and settings goes on from there,
// anything changed starts afresh. Errors (no text, a text shorter than one sequence, a width the
// heads do not divide, a model too large for the heap) are shown in the panel: the engine checks
// the settings and names the problem.
import { formatInt } from './dom.mjs';
import { zipArchive } from './zip.mjs';
import { AttentionGrid } from './attention-grid.mjs';
import { LossChart } from './loss-chart.mjs';
import { PRESETS, trainOptions } from './train-settings.mjs';
import { TrainingSession } from './training-session.mjs';

const $ = (id) => document.getElementById(id);

const FIELDS = {
  layers: 'train-layers',
  width: 'train-width',
  heads: 'train-heads',
  context: 'train-context',
  vocab: 'train-vocab',
  batch: 'train-batch',
  steps: 'train-steps',
  rate: 'train-rate',
  seed: 'train-seed',
  every: 'train-every',
};

export class TrainPanel {
  #text = $('train-text');
  #preset = $('train-preset');
  #trainButton = $('train-start');
  #stopButton = $('train-stop');
  #compareButton = $('train-compare');
  #useButton = $('train-use');
  #downloadButton = $('train-download');
  #result = $('train-result'); // Use the trained model, Download model
  #status = $('train-status'); // what happened (a live region)
  #progress = $('train-progress'); // the step under way (not live: it changes several times a second)
  #progressBar = $('train-progress-bar');
  #error = $('train-error');
  #chart = new LossChart($('loss-chart'), $('loss-legend'), () => this.#showProgress());
  #latest = null; // the last step of the last run: {step, count}, shown under the bar with the chart
  #samples = $('train-samples');
  #grids = [new AttentionGrid($('train-grid-0'), ''), new AttentionGrid($('train-grid-1'), '')];
  #sessions = []; // the runs of the last Train or Compare: one, or two (1 head, n heads)
  #started = null; // what they were started with: {text, options (as JSON), compare}
  #running = false;
  #iterating = false; // the runs are stepping (Stop applies)
  #stopHadFocus = false; // Stop had the focus when it was disabled
  #stopping = false; // Stop was pressed
  #announced = false; // the status has said which step the run is at
  #trained = []; // [{files, name}] of the last run(s) stopped or done: what Use and Download give
  #onTrained;

  // onTrained(files, name, {load}): the person chose to use a trained model (files: its four files;
  // load: the one to load, the last of a comparison).
  constructor({ onTrained }) {
    this.#onTrained = onTrained;
    this.#preset.addEventListener('change', () => this.#applyPreset());
    for (const id of Object.values(FIELDS))
      $(id).addEventListener('input', () => {
        this.#preset.value = this.#matchingPreset();
      });
    $('train-sample').addEventListener('click', () => this.#loadSample());
    $('train-files').addEventListener('change', (e) =>
      this.#readFiles(Array.from(e.target.files ?? [])).finally(() => {
        e.target.value = '';
      }),
    );
    // Files dragged onto the box are texts to train on, not a model to open: the page's drop
    // handling (model-picker.mjs) does not see them here.
    for (const type of ['dragenter', 'dragover', 'dragleave']) {
      this.#text.addEventListener(type, (e) => {
        if (!Array.from(e.dataTransfer?.types ?? []).includes('Files')) return;
        e.preventDefault();
        e.stopPropagation();
      });
    }
    this.#text.addEventListener('drop', (e) => {
      if (!e.dataTransfer?.files?.length) return;
      e.preventDefault();
      e.stopPropagation();
      if (!this.#running) this.#readFiles(Array.from(e.dataTransfer.files));
    });
    this.#text.addEventListener('input', () => this.#describeText());
    this.#trainButton.addEventListener('click', () => this.#start(false));
    this.#compareButton.addEventListener('click', () => this.#start(true));
    this.#stopButton.addEventListener('click', () => this.#stop());
    this.#useButton.addEventListener('click', () => this.#use());
    this.#downloadButton.addEventListener('click', () => this.#download());
    this.#applyPreset();
    this.#describeText();
    this.#setRunning(false); // the buttons wait for this code (app.mjs loads it after the first model)
  }

  #applyPreset() {
    const p = PRESETS[this.#preset.value];
    if (!p) return; // "Custom": the numbers as they are
    for (const [name, id] of Object.entries(FIELDS)) if (name in p) $(id).value = String(p[name]);
  }

  #matchingPreset() {
    const now = this.#readFields();
    const same = (p) => Object.keys(p).every((k) => now[k] === p[k]);
    return Object.keys(PRESETS).find((name) => same(PRESETS[name])) ?? 'custom';
  }

  #readFields() {
    return Object.fromEntries(Object.entries(FIELDS).map(([name, id]) => [name, Number($(id).value)]));
  }

  // train()'s options from the fields, or throws with a message naming the field.
  // (train() checks the ranges: its message is shown as the others.)
  #options() {
    const f = this.#readFields();
    for (const id of Object.values(FIELDS)) $(id).removeAttribute('aria-invalid');
    for (const [name, id] of Object.entries(FIELDS)) {
      const input = $(id),
        label = document.querySelector(`label[for="${id}"]`).textContent;
      const integer = name !== 'rate';
      if (
        input.value.trim() === '' ||
        !Number.isFinite(f[name]) ||
        (integer && !Number.isInteger(f[name])) ||
        f[name] < 0 ||
        (name !== 'seed' && f[name] <= 0)
      ) {
        input.setAttribute('aria-invalid', 'true');
        const more = input.closest('details');
        if (more) more.open = true;
        input.focus();
        throw new Error(
          `${label} must be ${integer ? 'a whole number' : 'a number'}${name === 'seed' ? ' from 0' : ' above 0'}.`,
        );
      }
    }
    return { ...trainOptions(f), sampleEvery: f.every };
  }

  #describeText() {
    const text = this.#text.value,
      words = text.split(/\s+/).filter(Boolean).length;
    $('train-text-info').textContent = text
      ? `${formatInt(text.length)} characters, ${formatInt(words)} words. The last 10% is held out: the held-out loss is measured on it.`
      : 'Paste a text, drop .txt files here, or use the Brown corpus sample. The last 10% is held out to measure the loss on text the model has not seen.';
  }

  async #loadSample() {
    this.#showError('');
    try {
      const response = await fetch('samples/brown-news.txt');
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      this.#text.value = await response.text();
      this.#describeText();
    } catch (e) {
      this.#showError(`Cannot load the Brown sample: ${e.message}`);
    }
  }

  async #readFiles(files) {
    this.#showError('');
    const texts = [];
    for (const file of files) {
      if (file.type && !file.type.startsWith('text/')) {
        this.#showError(`${file.name} is not a text file (${file.type}): drop .txt files.`);
        return;
      }
      texts.push(await file.text());
    }
    if (!texts.length) return;
    this.#text.value = texts.join('\n\n');
    this.#describeText();
  }

  // Train (compare false) or Compare one head and many (true).
  async #start(compare) {
    if (this.#running) return;
    this.#showError('');
    const text = this.#text.value;
    let options;
    try {
      if (!text.trim()) {
        this.#text.focus();
        throw new Error(
          'There is no text to train on: paste a text, drop .txt files on the box, or use the Brown corpus sample.',
        );
      }
      options = this.#options();
      if (compare && options.nHead === 1)
        throw new Error('Comparing needs more than one head: set Heads to 2 or more.');
    } catch (e) {
      this.#showError(e.message);
      return;
    }
    const started = { text, options: JSON.stringify(options), compare };
    const paused = this.#sessions.length > 0 && this.#sessions.every((s) => s.stopReason === 'paused');
    const change = paused ? changeSince(this.#started, started) : '';
    const resuming = paused && !change;
    // The button pressed is disabled while training: the focus goes to Stop instead of the page's body.
    const pressed = [this.#trainButton, this.#compareButton].includes(document.activeElement);
    this.#setRunning(true);
    if (pressed) this.#stopButton.focus();
    const { steps } = options;
    try {
      if (!resuming) this.#begin(text, options, compare, started);
      this.#status.textContent = resuming
        ? `Going on from step ${formatInt(this.#sessions[0].step)} of ${formatInt(steps)}.`
        : `${change ? `${change}: starting afresh. ` : ''}` +
          `Learning the text's vocabulary (the first step${compare ? ' of both models' : ''})…`;
      this.#latest = null;
      this.#progress.textContent = '';
      this.#progressBar.max = steps;
      this.#iterating = true;
      const results = await Promise.allSettled(
        this.#sessions.map((s) =>
          s.go().catch((e) => {
            for (const other of this.#sessions) other.pause(); // one failed: the other stops too
            throw e;
          }),
        ),
      );
      this.#iterating = false;
      this.#chart.flush(); // the last steps, drawn now
      this.#stopHadFocus ||= document.activeElement === this.#stopButton;
      this.#stopButton.disabled = true;
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      if (this.#sessions.some((s) => s.stopReason === 'cancelled')) {
        // stopped in its first step
        this.#end();
        this.#status.textContent = 'Stopped before the first step was done: nothing was trained.';
        return;
      }
      const done = this.#sessions.every((s) => s.stopReason === 'done');
      const step = Math.min(...this.#sessions.map((s) => s.step));
      const summary = this.#summary();
      await this.#offer(done);
      this.#status.textContent =
        `${done ? 'Trained' : 'Stopped after'} ${formatInt(step)} of ${formatInt(steps)} steps. ` +
        `${summary}${done ? '' : ' Train goes on from here.'}`;
    } catch (e) {
      this.#status.textContent = 'Training stopped with an error.';
      this.#showError(`Training failed: ${inPageWords(e.message)}`);
      this.#end();
    } finally {
      this.#iterating = false;
      // Stop (or the end of the run) disabled the focused Stop button: the focus goes on to what comes
      // next, not to the page's body.
      const refocus = this.#stopHadFocus || document.activeElement === this.#stopButton;
      this.#stopHadFocus = false;
      this.#setRunning(false);
      if (refocus) (this.#result.hidden ? this.#trainButton : this.#useButton).focus();
    }
  }

  // New runs, the chart, the samples and the maps made afresh for them.
  #begin(text, options, compare, started) {
    this.#end();
    this.#started = started;
    const { sampleEvery, ...runOptions } = options;
    const probe = probeText(text);
    const runs = compare ? [1, options.nHead] : [options.nHead];
    const shape = `${options.nLayer} × ${options.nEmbd}`;
    const names = runs.map((h) => `${h} head${h === 1 ? '' : 's'}`);
    this.#chart.reset(
      names.flatMap((n, i) =>
        compare
          ? [
              { name: `${n}: training`, className: `train-${i}` },
              { name: `${n}: held-out`, className: `valid-${i}` },
            ]
          : [
              { name: 'Training', className: 'train-0' },
              { name: 'Held-out', className: 'valid-0' },
            ],
      ),
      options.steps,
    );
    this.#samples.replaceChildren();
    this.#grids[1].configure(0, 0, '');
    $('train-grid-1').hidden = !compare;
    this.#sessions = runs.map((nHead, i) => {
      this.#grids[i].configure(options.nLayer, nHead, `${shape}, ${names[i]}`);
      return new TrainingSession(
        [text],
        { ...runOptions, nHead },
        {
          name: `Trained here (${shape}, ${names[i]})`,
          probe,
          sampleEvery,
          onStep: (s) => this.#onStep(i, s, runs.length),
          onLook: (look) => this.#onLook(i, look, names[i], runs.length),
        },
      );
    });
  }

  #onStep(i, s, count) {
    this.#chart.add(2 * i, s.step, s.loss);
    if (s.validLoss !== undefined) this.#chart.add(2 * i + 1, s.step, s.validLoss);
    if (i === count - 1) {
      // The status (a live region) says where the run is at its first step and at each sample; the
      // line under the bar follows the steps, with the chart.
      if (!this.#announced) this.#announce(s.step);
      this.#latest = { step: s, count };
    }
  }

  #showProgress() {
    if (!this.#latest) return;
    const { step: s, count } = this.#latest;
    this.#progressBar.value = s.step;
    this.#progress.textContent =
      `Step ${formatInt(s.step)} of ${formatInt(this.#sessions[0]?.settings.steps ?? s.step)}: ` +
      `loss ${s.loss.toFixed(3)}${this.#latestValid()}, ` +
      `${formatInt(Math.round(s.tokensPerSecond))} tokens/s${count > 1 ? ' each' : ''}.`;
  }

  #announce(step) {
    this.#announced = true;
    if (this.#stopping) return; // it says so
    const count = this.#sessions.length;
    this.#status.textContent =
      `Training ${count > 1 ? 'two models ' : ''}in a worker: step ${formatInt(step)} of ` +
      `${formatInt(this.#sessions[0].settings.steps)}.`;
  }

  #latestValid() {
    const valid = this.#chart.series.filter((s) => s.className.startsWith('valid') && s.points.length);
    return valid.length ? `, held-out ${valid.map((s) => s.points.at(-1)[1].toFixed(3)).join(' / ')}` : '';
  }

  #onLook(i, look, name, count) {
    if (look.error) {
      this.#showError(`Cannot show the model at step ${look.step}: ${look.error.message}`);
      return;
    }
    const caption = `step ${look.step}, over the first ${look.tokens} tokens of the text`;
    if (look.attention) this.#grids[i].draw(look.attention, look.tokens, caption);
    if (i === count - 1 && this.#iterating) this.#announce(look.step);
    const item = document.createElement('li');
    const head = document.createElement('span');
    head.className = 'sample-step';
    head.textContent = `Step ${look.step}${count > 1 ? `, ${name}` : ''}: `;
    const prompt = document.createElement('b');
    prompt.textContent = look.prompt;
    item.append(head, prompt, document.createTextNode(look.sample));
    item.dataset.run = String(i);
    this.#samples.prepend(item);
    while (this.#samples.children.length > 12) this.#samples.lastChild.remove();
  }

  // The held-out losses where the runs stopped, and for a comparison which one came out lower.
  #summary() {
    const valid = this.#chart.series.filter((s) => s.className.startsWith('valid') && s.points.length);
    if (valid.length !== this.#sessions.length) return '';
    const last = valid.map((s) => s.points.at(-1)[1]);
    if (last.length === 1) return `Held-out loss ${last[0].toFixed(3)}.`;
    const [one, many] = last;
    return (
      `Held-out loss: ${one.toFixed(3)} with 1 head, ${many.toFixed(3)} with ${this.#sessions[1].settings.nHead} ` +
      `(${many < one ? 'many heads lower' : many > one ? 'one head lower' : 'the same'} by ${Math.abs(one - many).toFixed(3)}).`
    );
  }

  // The model(s) where the runs stopped, offered: Use the trained model, Download model.
  async #offer(done) {
    this.#trained = await Promise.all(this.#sessions.map(async (s) => ({ files: await s.files(), name: s.name })));
    if (done) this.#end(); // nothing left to go on with: Train starts afresh
    const [first, last] = [this.#trained[0], this.#trained.at(-1)];
    this.#useButton.textContent = `Use the trained model${this.#trained.length > 1 ? 's' : ''}`;
    $('train-use-hint').textContent =
      this.#trained.length > 1
        ? `Both join the Model select (${first.name}, ${last.name}); the last is loaded.`
        : `${last.name} joins the Model select and is loaded.`;
    $('train-download-hint').textContent =
      `Download saves one .zip archive: ${this.#trained.length > 1 ? 'a folder per model' : 'a folder'} with ` +
      'config.json, model.safetensors, vocab.json and merges.txt (the Hugging Face layout), which glassbox’s ' +
      'CLI and Hugging Face’s GPT-2 loader read.';
    this.#result.hidden = false;
  }

  // The trained model(s) into the Model select, the last loaded: every view of the page has it.
  #use() {
    for (const t of this.#trained) this.#onTrained(t.files, t.name, { load: t === this.#trained.at(-1) });
  }

  // Ends the runs and their workers (the chart, the samples and the trained models stay).
  #end() {
    for (const s of this.#sessions) s.dispose();
    this.#sessions = [];
    this.#started = null;
  }

  // Pauses after the step under way; a run still in its first step (learning its vocabulary, which
  // can take a while on a long text) ends at once instead.
  #stop() {
    if (!this.#iterating) return;
    for (const s of this.#sessions) {
      if (s.step === 0) s.dispose();
      else s.pause();
    }
    this.#stopping = true;
    this.#stopHadFocus = document.activeElement === this.#stopButton;
    this.#stopButton.disabled = true;
    this.#status.textContent = 'Stopping after the step under way…';
  }

  // While training, the text and the settings stay as they were (Train after Stop goes on with them).
  #setRunning(on) {
    this.#running = on;
    this.#announced = this.#stopping = false;
    this.#trainButton.disabled = this.#compareButton.disabled = on;
    this.#stopButton.disabled = !on;
    this.#text.readOnly = on;
    for (const id of ['train-sample', 'train-files', 'train-preset', ...Object.values(FIELDS)]) $(id).disabled = on;
    this.#useButton.disabled = this.#downloadButton.disabled = on;
  }

  // One .zip: a folder per model (two after a comparison) with its four files.
  #download() {
    if (!this.#trained.length) return;
    const folders = this.#trained.map((t) => ({ ...t, folder: folderName(t.name) }));
    const archive = zipArchive(
      folders.flatMap(({ files, folder }) => [
        { name: `${folder}/config.json`, data: files.config },
        { name: `${folder}/model.safetensors`, data: files.weights },
        { name: `${folder}/vocab.json`, data: files.vocab },
        { name: `${folder}/merges.txt`, data: files.merges },
      ]),
    );
    const url = URL.createObjectURL(archive);
    const a = document.createElement('a');
    a.href = url;
    a.download = `${folders.length > 1 ? folders.map((f) => f.folder).join('-vs-') : folders[0].folder}.zip`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }

  #showError(message) {
    this.#error.textContent = message;
    this.#error.hidden = !message;
  }
}

// The engine's messages name train()'s options and config.json's fields: here they are the
// panel's fields.
const FIELD_WORDS = {
  seqLen: 'Context',
  nPositions: 'Context',
  n_positions: 'Context',
  nEmbd: 'Width',
  n_embd: 'Width',
  nHead: 'Heads',
  n_head: 'Heads',
  nLayer: 'Layers',
  n_layer: 'Layers',
  vocabSize: 'Vocabulary',
  batchSize: 'Batch',
};
const inPageWords = (message) =>
  message.replace(
    /\b(seqLen|nPositions|n_positions|nEmbd|n_embd|nHead|n_head|nLayer|n_layer|vocabSize|batchSize)\b/g,
    (word) => FIELD_WORDS[word],
  );

// What differs between the runs stopped (before) and those asked for now (after), in words, or ''
// when Train (or Compare) can go on with them.
function changeSince(before, after) {
  if (before.text !== after.text) return 'The text changed since Stop';
  if (before.options !== after.options) return 'The settings changed since Stop';
  if (before.compare !== after.compare)
    return after.compare ? 'Compare trains two new models' : 'Train trains one new model, not the comparison';
  return '';
}

// A model's name in the Model select as a folder's: "Trained here (2 × 64, 4 heads)" ->
// "trained-2x64-4-heads".
const folderName = (name) =>
  name
    .toLowerCase()
    .replace(/ × /g, 'x')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

// The text the attention maps show: its first line with a few words in it, at most 200 characters
// (cut at a space).
function probeText(text) {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.split(/\s+/).length >= 4) ?? text.trim();
  if (line.length <= 200) return line;
  const cut = line.lastIndexOf(' ', 200);
  return line.slice(0, cut > 0 ? cut : 200);
}
