// The "Model" picker: the shipped model (loaded at start), cached remote models, models trained on
// the page (the Train panel), a model from local files (file inputs, or drag-and-drop of the files
// or their folder anywhere on the page) and from a URL (downloaded with a progress bar in bytes
// and cached). The engine always runs in a worker, so
// loading a large checkpoint never blocks the page. Failures are shown on the page (role=alert).
import { estimateModel, loadModel } from '../dist/glassbox.mjs';
import { SHIPPED, SHIPPED_MODELS, shippedLoad } from '../start.mjs';
import { clear, el, formatBytes } from './dom.mjs';
import { cacheAvailable, clearCache, listCached, modelDirectoryUrl, removeCached } from './model-cache.mjs';
import { filesFromDataTransfer, pickModelFiles } from './model-files.mjs';

const $ = (id) => document.getElementById(id);

// Real models to try, by hub id: each ships config.json, model.safetensors and tokenizer.json; the
// instruct ones carry a chat template too, and the page talks with them (a conversation in the
// Prompt panel). Choosing one fills the URL form, which shows what it needs in memory before
// anything large is downloaded.
export const HUB_MODELS = [
  { id: 'HuggingFaceTB/SmolLM2-135M-Instruct', what: 'llama, 135M parameters, chat' },
  { id: 'HuggingFaceTB/SmolLM2-135M', what: 'llama, 135M parameters' },
  { id: 'EleutherAI/pythia-160m', what: 'gpt_neox, 160M parameters' },
  { id: 'Qwen/Qwen2.5-0.5B-Instruct', what: 'qwen2, 0.5B parameters, chat' },
];

// The weights' forms (loadModel's quantize): as the page names them, the boxes that ask for them,
// and the smaller forms to suggest, in order, when a model does not fit.
const FORM_NAMES = { none: 'F32', int8: 'int8', int4: 'int4' };
const FORM_LABELS = { int8: 'Int8 weights', int4: 'Int4 weights' };
const SMALLER_FORMS = { none: ['int8', 'int4'], int8: ['int4'], int4: [] };

export class ModelPicker {
  #select = $('model-select');
  #filesPanel = $('files-panel');
  #urlPanel = $('url-panel');
  #urlInput = $('model-url');
  #urlLoad = $('model-url-load');
  #urlCancel = $('model-url-cancel');
  #urlEstimate = $('model-url-estimate');
  #estimating = null; // AbortController of the estimate in progress
  #estimateTimer = 0;
  #estimatedFor = null; // the URL field's text the estimate shown is for
  #shaInput = $('model-sha256');
  #progress = $('load-progress');
  #progressBar = $('load-progress-bar');
  #progressLabel = $('load-progress-label');
  #progressText = $('load-progress-text');
  #error = $('model-error');
  #int8 = $('quantize-int8');
  #int4 = $('quantize-int4');
  #cacheSummary = $('cache-summary');
  #cacheList = $('cache-list');
  #cacheClear = $('cache-clear');
  #current = 'shipped'; // select value of the loaded model
  #currentName = SHIPPED.name;
  #localFiles = null; // {files, name} of the last local model, to reopen it from the picker
  #trained = new Map(); // select value -> {files, name} of the models trained in the Train panel
  #cached = [];
  #loadId = 0;
  #loading = null; // AbortController of the load in progress (a newer one cancels it)
  #pickTimer = 0;
  #callbacks;

  // callbacks: onLoading(name, started: performance.now() of the load's start), onTokenizer(tokenizer,
  // name) (its tokenizer, before the weights: loadModel's onTokenizer), onLoaded(model, name,
  // example: a shipped model's example prompt, or null), onFailed(error, name)
  constructor(callbacks) {
    this.#callbacks = callbacks;
    this.#select.addEventListener('change', () => this.#picked());
    // The weights' forms exclude each other: ticking one unticks the other, and the model reloads.
    for (const [box, other] of [
      [this.#int8, this.#int4],
      [this.#int4, this.#int8],
    ]) {
      box.addEventListener('change', () => {
        if (box.checked) other.checked = false;
        this.#reload();
        this.#estimateSoon(0);
      });
    }
    this.#urlInput.addEventListener('input', () => this.#estimateSoon(500));
    for (const input of [$('model-files'), $('model-folder')]) {
      input.addEventListener('change', () => {
        const files = Array.from(input.files ?? []);
        input.value = '';
        if (files.length) this.openFiles(files);
      });
    }
    this.#urlPanel.addEventListener('submit', (e) => {
      e.preventDefault();
      // A download checks the size itself before it fetches the weights: an estimate not begun yet
      // would only repeat that, and one shown for another address would mislead.
      clearTimeout(this.#estimateTimer);
      if (this.#estimatedFor !== this.#urlInput.value) this.#urlEstimate.hidden = true;
      this.openUrl(this.#urlInput.value);
    });
    this.#urlCancel.addEventListener('click', () => this.#loading?.abort(new Error('the download was cancelled')));
    this.#cacheClear.addEventListener('click', () => this.#changeCache(() => clearCache()));
    this.#setupDrop();
    if (!cacheAvailable)
      this.#cacheSummary.textContent = 'Cached models (not available: this page is not in a secure context)';
  }

  // Takes over the shipped model's load that start.mjs began (unless the Int8 or Int4 box, as the
  // browser restored it, asks for other weights: then it loads again).
  async start() {
    this.refreshCache(); // the list of cached models does not hold up the load
    if (this.#int8.checked && this.#int4.checked) this.#int4.checked = false; // one form at a time
    const quantize = this.#quantize();
    if (quantize === shippedLoad.quantize)
      return this.#load(SHIPPED.url, SHIPPED.name, 'shipped', { early: shippedLoad });
    shippedLoad.controller.abort(new Error(`the ${quantize} weights were asked for`));
    return this.#load(SHIPPED.url, SHIPPED.name, 'shipped');
  }

  // The weights' form the boxes ask for: loadModel's quantize.
  #quantize() {
    return this.#int8.checked ? 'int8' : this.#int4.checked ? 'int4' : 'none';
  }

  async refreshCache() {
    try {
      this.#cached = await listCached();
    } catch (e) {
      this.#cached = [];
      this.#showError(`Cannot read the cache: ${e.message}`);
    }
    clear(this.#cacheList);
    const total = this.#cached.reduce((n, c) => n + c.bytes, 0);
    this.#cacheSummary.textContent = this.#cached.length
      ? `Cached models (${this.#cached.length}, ${formatBytes(total)})`
      : 'Cached models (none)';
    if (!this.#cached.length)
      this.#cacheList.append(
        el('li', { className: 'muted small' }, 'Nothing cached yet: models downloaded from a URL are kept here.'),
      );
    for (const c of this.#cached) {
      this.#cacheList.append(
        el(
          'li',
          {},
          el('span', { className: 'cache-url', title: c.url }, c.url),
          el('span', { className: 'cache-size' }, formatBytes(c.bytes)),
          el(
            'button',
            {
              type: 'button',
              className: 'secondary small-button',
              attrs: { 'aria-label': `Remove ${c.url} from the cache` },
              on: { click: () => this.#changeCache(() => removeCached(c.url)) },
            },
            'Remove',
          ),
        ),
      );
    }
    this.#cacheClear.disabled = !this.#cached.length;
    this.#fillSelect();
  }

  // Removes from the cache, then shows what is left; the focus stays in the cache list.
  async #changeCache(change) {
    try {
      await change();
    } catch (e) {
      this.#showError(`Cannot change the cache: ${e.message}`);
    }
    await this.refreshCache();
    (this.#cacheList.querySelector('button') ?? this.#cacheSummary).focus();
  }

  // Local files (from an input or a drop).
  async openFiles(files, folder = null) {
    let picked;
    try {
      picked = await pickModelFiles(files, folder);
    } catch (e) {
      this.#showError(e.message);
      return;
    }
    // They become the "Local files" choice once they have loaded.
    await this.#load(picked.files, picked.name, 'files', {
      onSuccess: () => {
        this.#localFiles = picked;
      },
    });
  }

  // A model trained on this page (the Train panel: its four files, as loadModel reads them) becomes
  // a choice of the select, or replaces the one of the same name (a run that went on); load: load it
  // now, unless another model is loading (which it would cancel). The last four are kept.
  async addTrained(files, name, { load = true } = {}) {
    const value = `trained:${name}`;
    this.#trained.delete(value);
    this.#trained.set(value, { files, name });
    while (this.#trained.size > 4) this.#trained.delete(this.#trained.keys().next().value);
    if (load && !this.#loading) await this.#load(files, name, value);
    else this.#fillSelect();
  }

  // A URL or hub repository id typed by the person, and optionally the SHA-256 that
  // model.safetensors must have (checked before the model is used or cached).
  async openUrl(input, sha256 = this.#shaInput.value.trim()) {
    let dir;
    try {
      dir = modelDirectoryUrl(input);
    } catch (e) {
      this.#showError(e.message);
      this.#urlInput.focus();
      return;
    }
    await this.#loadRemote(dir, sha256 || undefined);
  }

  // The memory the model at the URL field's address needs, shown under the field (from its
  // config.json and the header of its model.safetensors: a few KB, not the weights), once typing
  // has paused for `delay` ms.
  #estimateSoon(delay) {
    clearTimeout(this.#estimateTimer);
    this.#estimating?.abort();
    this.#estimateTimer = setTimeout(() => this.#estimate(), delay);
  }

  async #estimate() {
    const show = (text, kind) => {
      this.#urlEstimate.hidden = !text;
      this.#urlEstimate.textContent = text;
      this.#urlEstimate.dataset.kind = kind;
    };
    let dir;
    try {
      dir = modelDirectoryUrl(this.#urlInput.value);
    } catch {
      return show('', 'none'); // nothing (yet) to estimate: the Download button says what is wrong
    }
    const controller = (this.#estimating = new AbortController());
    this.#estimatedFor = this.#urlInput.value;
    const quantize = this.#quantize();
    const count = (form) => estimateModel(dir, { quantize: form, signal: controller.signal, worker: true });
    show('Checking the size of this model…', 'pending');
    try {
      const e = await count(quantize);
      if (controller.signal.aborted) return;
      const size = e.fileBytes ? `model.safetensors is ${formatBytes(e.fileBytes)}. ` : '';
      const parts = `${formatBytes(e.loadBytes)} for the ${FORM_NAMES[quantize]} weights, ${formatBytes(e.cacheBytes)} for a full context`;
      let text = `${size}It needs about ${formatBytes(e.totalBytes)} of memory (${parts}): `;
      if (e.fits) {
        text += `it fits in the ${formatBytes(e.limitBytes)} a browser tab's engine can have.`;
      } else {
        text += `more than the ${formatBytes(e.limitBytes)} a browser tab's engine can have.`;
        // The first smaller form that fits (int8 before int4: it moves the logits less).
        for (const form of SMALLER_FORMS[quantize]) {
          const small = await count(form);
          if (controller.signal.aborted) return;
          if (!small.fits) continue;
          text += ` With ${FORM_LABELS[form]} it needs about ${formatBytes(small.totalBytes)} and fits.`;
          break;
        }
      }
      show(text, e.fits ? 'fits' : 'too-large');
    } catch (e) {
      if (!controller.signal.aborted) show(`Cannot tell its size yet: ${e.message}`, 'unknown');
    }
  }

  #fillSelect() {
    const options = SHIPPED_MODELS.map((m) =>
      el('option', { value: m.value }, `${m.name} (shipped${m.what ? `: ${m.what}` : ''})`),
    );
    for (const c of this.#cached)
      options.push(el('option', { value: `cached:${c.url}` }, `${shortUrl(c.url)} (cached, ${formatBytes(c.bytes)})`));
    for (const [value, { name }] of this.#trained) options.push(el('option', { value }, name));
    if (this.#localFiles) {
      const { name } = this.#localFiles;
      options.push(el('option', { value: 'files' }, name === 'local files' ? 'Local files' : `${name} (local files)`));
    }
    if (!options.some((o) => o.value === this.#current))
      options.push(el('option', { value: this.#current }, `${this.#currentName} (loaded, not cached)`));
    options.push(el('option', { value: 'action:files' }, 'Open files on this device…'));
    options.push(el('option', { value: 'action:url' }, 'Download from a URL…'));
    const hub = el('optgroup', { attrs: { label: 'From the Hugging Face hub' } });
    for (const m of HUB_MODELS) hub.append(el('option', { value: `hub:${m.id}` }, `${m.id} (${m.what})…`));
    this.#select.replaceChildren(...options, hub);
    this.#select.value = this.#current;
    if (this.#select.value !== this.#current) this.#select.value = 'shipped';
  }

  #picked() {
    const value = this.#select.value;
    const hub = value.startsWith('hub:') ? value.slice(4) : null;
    this.#filesPanel.hidden = value !== 'action:files';
    this.#urlPanel.hidden = value !== 'action:url' && !hub;
    if (value === 'action:files') return;
    if (hub) {
      // The hub's model in the URL form, its memory estimate under it: Download fetches it.
      this.#urlInput.value = hub;
      this.#estimateSoon(0);
      this.#urlLoad.focus();
      return;
    }
    if (value === 'action:url') {
      this.#urlInput.focus();
      return;
    }
    clearTimeout(this.#pickTimer);
    if (value === this.#current) return;
    // Arrow keys on a closed select fire a change for every option they pass: the model loads once
    // the choice has settled.
    this.#pickTimer = setTimeout(() => {
      if (value === this.#select.value) this.#loadChoice(value);
    }, 300);
  }

  // A URL: the worker downloads it (or reads it from the cache) and keeps it in the cache.
  async #loadRemote(dir, sha256) {
    this.#urlCancel.hidden = false;
    const model = await this.#load(dir, shortUrl(dir), `cached:${dir}`, { cache: cacheAvailable, sha256 });
    this.#urlCancel.hidden = true;
    await this.refreshCache(); // a failed download left nothing in the cache: the list shows that too
    if (!model) return;
    if (model.cacheError) {
      this.#current = `remote:${dir}`; // loaded, but not cached
      this.#fillSelect();
      this.#showError(`Downloaded, but ${model.cacheError}.`);
    }
  }

  // The weights' form changed: the current model again, quantized or not.
  #reload() {
    clearTimeout(this.#pickTimer);
    this.#loadChoice(this.#current);
  }

  // Loads the model a select value names: the shipped model, the local files, a cached or
  // downloaded URL.
  #loadChoice(value) {
    const shipped = SHIPPED_MODELS.find((m) => m.value === value);
    if (shipped) this.#load(shipped.url, shipped.name, value);
    else if (this.#trained.has(value)) this.#load(this.#trained.get(value).files, this.#trained.get(value).name, value);
    else if (value === 'files' && this.#localFiles) this.#load(this.#localFiles.files, this.#localFiles.name, 'files');
    else if (value.startsWith('cached:') || value.startsWith('remote:'))
      this.#loadRemote(value.slice(value.indexOf(':') + 1));
  }

  // source: URL or {config, weights, vocab, merges}; value: the select value it will have; early:
  // a load of it already started ({controller, promise, latest, onProgress}, see start.mjs). A
  // load started meanwhile cancels this one. Resolves with the model once it is the current one,
  // or null.
  async #load(source, name, value, { cache = false, sha256, onSuccess, early } = {}) {
    const id = ++this.#loadId;
    this.#loading?.abort(new Error(`${name} was chosen instead`));
    const loading = (this.#loading = early?.controller ?? new AbortController());
    this.#clearError();
    this.#callbacks.onLoading(name, early?.started ?? performance.now());
    this.#showProgress(`Loading ${name}`, 0, 0);
    const onProgress = ({ loaded, total }) => {
      if (id === this.#loadId) this.#showProgress(`Loading ${name}`, loaded, total);
    };
    const onTokenizer = (tokenizer) => {
      if (id === this.#loadId) this.#callbacks.onTokenizer(tokenizer, name);
    };
    let model;
    try {
      if (early) {
        early.onProgress = onProgress;
        early.onTokenizer = onTokenizer;
        if (early.latest) onProgress(early.latest);
        if (early.tokenizer) onTokenizer(early.tokenizer);
        model = await early.promise;
      } else {
        model = await loadModel(source, {
          worker: true,
          cache,
          sha256,
          quantize: this.#quantize(),
          signal: loading.signal,
          onProgress,
          onTokenizer,
        });
      }
    } catch (e) {
      model?.dispose();
      if (id !== this.#loadId) return null; // superseded: the newer load reports
      this.#loading = null;
      this.#hideProgress();
      this.#fail(e, name);
      return null;
    }
    if (id !== this.#loadId) {
      // another model was asked for meanwhile
      model.dispose();
      return null;
    }
    this.#loading = null;
    this.#hideProgress();
    onSuccess?.();
    this.#current = value;
    this.#currentName = name;
    this.#filesPanel.hidden = this.#urlPanel.hidden = true;
    this.#fillSelect();
    performance.mark('glassbox:model-ready');
    this.#callbacks.onLoaded(model, name, SHIPPED_MODELS.find((m) => m.value === value)?.example ?? null);
    return model;
  }

  #fail(error, name) {
    const message = error?.message ?? String(error);
    this.#showError(`Could not load “${name}”: ${message}`);
    this.#select.value = this.#current;
    this.#callbacks.onFailed(error, name);
  }

  #showProgress(label, loaded, total) {
    this.#progress.hidden = false;
    this.#progressLabel.textContent = label;
    if (total > 0) {
      this.#progressBar.max = total;
      this.#progressBar.value = loaded;
      this.#progressText.textContent = `${formatBytes(loaded)} of ${formatBytes(total)}`;
    } else {
      this.#progressBar.removeAttribute('value'); // indeterminate
      this.#progressText.textContent = loaded ? formatBytes(loaded) : '';
    }
  }

  #hideProgress() {
    this.#progress.hidden = true;
  }

  #showError(message) {
    this.#error.textContent = message;
    this.#error.hidden = false;
  }

  #clearError() {
    this.#error.textContent = '';
    this.#error.hidden = true;
  }

  // Files or a folder dropped anywhere on the page open as a model.
  #setupDrop() {
    const overlay = $('drop-overlay'),
      zone = $('dropzone');
    const hasFiles = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
    let depth = 0;
    document.addEventListener('dragenter', (e) => {
      if (!hasFiles(e)) return;
      ++depth;
      overlay.hidden = false;
      zone.classList.add('active');
    });
    document.addEventListener('dragleave', () => {
      if (--depth <= 0) {
        depth = 0;
        overlay.hidden = true;
        zone.classList.remove('active');
      }
    });
    document.addEventListener('dragover', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    });
    document.addEventListener('drop', async (e) => {
      if (!hasFiles(e) && !e.dataTransfer?.files?.length) return;
      e.preventDefault();
      depth = 0;
      overlay.hidden = true;
      zone.classList.remove('active');
      try {
        const { files, folder } = await filesFromDataTransfer(e.dataTransfer);
        await this.openFiles(files, folder);
      } catch (err) {
        this.#showError(`Could not read the dropped files: ${err.message}`);
      }
    });
  }
}

function shortUrl(url) {
  const m = /^https:\/\/(?:huggingface\.co|hf\.co)\/(.+?)\/resolve\/main\/$/.exec(url);
  return m ? m[1] : url;
}
