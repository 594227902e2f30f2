// glassbox: GPT-2-family transformers in the browser, a worker or Node, with attention you can see.
//
//   import { loadModel } from './dist/glassbox.mjs';
//   const model = await loadModel('models/brown-small/', { onProgress, worker: true });
//   for await (const step of model.generate('The jury', { maxTokens: 20, attention: true })) ...
//
// Every method is async, so the same code works with the engine in this thread or in a worker.
// Errors are rejected promises with an Error whose message says what to fix.
import { LocalModel } from './engine.mjs';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
const FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];

// source: a model directory (URL in the browser, path or file: URL in Node), or the files
// themselves: {config, weights, vocab, merges} as ArrayBuffer, typed array, Blob/File or string.
export async function loadModel(source, { onProgress, worker = false } = {}) {
  const files = await readSource(source, onProgress);
  if (!worker) return LocalModel.load(files);
  return WorkerModel.load(files);
}

// --- reading the four files

async function readSource(source, onProgress) {
  if (source === null || source === undefined) throw new TypeError('loadModel needs a model directory or {config, weights, vocab, merges}');
  if (typeof source === 'string' || source instanceof URL) {
    return isNode && !/^https?:/.test(String(source)) ? readDirectoryNode(source, onProgress) : readDirectoryUrl(source, onProgress);
  }
  if (typeof source !== 'object' || !('config' in source) || !('weights' in source))
    throw new TypeError('loadModel: the files object needs at least "config" and "weights" (and "vocab", "merges" for text)');
  const total = byteLength(source.weights);
  const files = {
    config: await asText(source.config, 'config'),
    weights: await asBytes(source.weights, 'weights'),
    vocab: source.vocab === undefined ? undefined : await asText(source.vocab, 'vocab'),
    merges: source.merges === undefined ? undefined : await asText(source.merges, 'merges'),
  };
  onProgress?.({ loaded: total, total });
  return files;
}

function byteLength(x) {
  return x?.byteLength ?? x?.size ?? 0;
}

async function asBytes(x, what) {
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (typeof Blob !== 'undefined' && x instanceof Blob) return new Uint8Array(await x.arrayBuffer());
  throw new TypeError(`loadModel: "${what}" must be an ArrayBuffer, a typed array or a Blob/File`);
}

async function asText(x, what) {
  if (typeof x === 'string') return x;
  return new TextDecoder('utf-8', { fatal: false }).decode(await asBytes(x, what));
}

async function readDirectoryNode(dir, onProgress) {
  const { readFile, stat } = await import('node:fs/promises');
  const { fileURLToPath } = await import('node:url');
  const path = await import('node:path');
  const base = dir instanceof URL || String(dir).startsWith('file:') ? fileURLToPath(dir) : String(dir);
  const read = async (name, optional) => {
    try {
      return await readFile(path.join(base, name));
    } catch (e) {
      if (optional && e.code === 'ENOENT') return undefined;
      throw new Error(`cannot read ${path.join(base, name)}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
    }
  };
  const info = await stat(base).catch(() => null);
  if (!info?.isDirectory()) throw new Error(`${base} is not a model directory (config.json, model.safetensors, vocab.json, merges.txt)`);
  const config = await read('config.json');
  const weights = await read('model.safetensors');
  onProgress?.({ loaded: weights.length, total: weights.length });
  const vocab = await read('vocab.json', true);
  const merges = await read('merges.txt', true);
  return { config: config.toString('utf8'), weights, vocab: vocab?.toString('utf8'), merges: merges?.toString('utf8'), owned: true };
}

async function readDirectoryUrl(dir, onProgress) {
  const base = new URL(String(dir).endsWith('/') ? String(dir) : `${dir}/`, globalThis.location?.href);
  const get = async (name, optional) => {
    let response;
    try {
      response = await fetch(new URL(name, base));
    } catch (e) {
      throw new Error(`cannot download ${new URL(name, base)}: ${e.message}`);
    }
    if (optional && response.status === 404) return undefined;
    if (!response.ok) throw new Error(`cannot download ${new URL(name, base)}: HTTP ${response.status}`);
    return response;
  };
  const config = await (await get('config.json')).text();
  const weights = await readWithProgress(await get('model.safetensors'), onProgress);
  const vocab = await (await get('vocab.json', true))?.text();
  const merges = await (await get('merges.txt', true))?.text();
  return { config, weights, vocab, merges, owned: true };
}

// Streams a download into one buffer, reporting bytes as they arrive.
async function readWithProgress(response, onProgress) {
  const total = Number(response.headers.get('content-length')) || 0;
  if (!response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onProgress?.({ loaded: bytes.length, total: bytes.length });
    return bytes;
  }
  const chunks = [];
  let loaded = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onProgress?.({ loaded, total: total || loaded });
  }
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.length;
  }
  return bytes;
}

// --- the same API with the engine in a worker (a Web Worker, or a worker thread in Node)

class WorkerModel {
  #worker;
  #calls = new Map();   // id -> {resolve, reject, onStep}
  #nextId = 1;
  #generating = false;

  static async load(files) {
    const model = new WorkerModel();
    const url = new URL('./worker.mjs', import.meta.url);
    if (isNode) {
      const { Worker } = await import('node:worker_threads');
      model.#worker = new Worker(url);
      model.#worker.on('message', (m) => model.#receive(m));
      model.#worker.on('error', (e) => model.#failAll(e));
    } else {
      model.#worker = new Worker(url, { type: 'module' });
      model.#worker.onmessage = (e) => model.#receive(e.data);
      model.#worker.onerror = (e) => model.#failAll(new Error(`the glassbox worker failed: ${e.message}`));
    }
    // Bytes we downloaded or read ourselves move to the worker without a copy; the caller's own
    // buffer is copied, so that it stays usable.
    const weights = files.owned ? files.weights : files.weights.slice();
    try {
      model.config = await model.#call('load', { ...files, weights, owned: undefined }, [weights.buffer]);
    } catch (e) {
      await model.#worker.terminate();   // a failed load leaves no thread behind
      throw e;
    }
    return model;
  }

  #call(method, args, transfer = [], onStep) {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#calls.set(id, { resolve, reject, onStep });
      this.#worker.postMessage({ id, method, args }, transfer);
    });
  }

  #receive({ id, result, error, step }) {
    const call = this.#calls.get(id);
    if (!call) return;
    if (step) return call.onStep(step);
    this.#calls.delete(id);
    if (error !== undefined) call.reject(new Error(error));
    else call.resolve(result);
  }

  #failAll(error) {
    for (const call of this.#calls.values()) call.reject(error);
    this.#calls.clear();
  }

  #live() {
    if (!this.#worker) throw new Error('this model has been disposed');
  }

  async tokenize(text, options) {
    this.#live();
    return this.#call('tokenize', { text, options });
  }

  async detokenize(ids) {
    this.#live();
    return this.#call('detokenize', { ids: ArrayBuffer.isView(ids) ? Array.from(ids) : ids });
  }

  async forward(ids, options) {
    this.#live();
    return this.#call('forward', { ids: ArrayBuffer.isView(ids) ? Array.from(ids) : ids, options });
  }

  // Steps arrive as messages; the worker waits for a "pull" before computing the next token,
  // so an abort stops it within one token and a slow consumer never builds a queue.
  async *generate(prompt, options = {}) {
    this.#live();
    const { signal, ...rest } = options;
    if (this.#generating) throw new Error('a generation is already running on this model: finish or abort it first');
    signal?.throwIfAborted?.();
    this.#generating = true;
    const steps = [];
    let wake = null;
    const done = this.#call('generate', { prompt, options: rest }, [], (step) => {
      steps.push(step);
      wake?.();
    });
    let finished = false;
    done.then(() => { finished = true; wake?.(); }, () => { finished = true; wake?.(); });
    try {
      for (;;) {
        if (signal?.aborted) {
          this.#worker.postMessage({ method: 'abort' });
          await done.catch(() => {});
          return { stopReason: 'cancelled' };
        }
        if (steps.length) {
          yield steps.shift();
          this.#worker.postMessage({ method: 'pull' });
          continue;
        }
        if (finished) return await done;   // rethrows the worker's error, if any
        await new Promise((resolve) => {
          wake = resolve;
          signal?.addEventListener('abort', resolve, { once: true });
        });
        wake = null;
      }
    } finally {
      this.#generating = false;
    }
  }

  async dispose() {
    if (!this.#worker) return;
    await this.#call('dispose', {}).catch(() => {});
    await this.#worker.terminate();
    this.#worker = null;
  }
}
