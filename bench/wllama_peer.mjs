// wllama (npm @wllama/wllama: llama.cpp compiled to WebAssembly, bench/package.json pins it) as a
// peer in a Chromium page: its GGUF files, and what the page runs.
//
// Token ids in, token ids out. wllama 3's completion takes its prompt as text only (llama-server's
// code, which tokenizes it with special tokens parsed), so the files written for it carry an id
// vocabulary: token i is the user-defined token "<|i|>", and no merges. The prompt ids are sent as
// "<|1|><|998|>...", which its tokenizer splits back into exactly those ids (the page checks the
// count it reports), and every generated token comes back as "<|i|>" and with its id. The weights
// are the same as those bench/llama_cpp.mjs gives llama.cpp (scripts/write_gguf.mjs), so only the
// vocabulary's metadata differs; no BOS is added (tokenizer.ggml.add_bos_token false).
//
// wllama loads its .wasm from bench/node_modules through the page's own server, never a CDN. Its
// worker is a blob: URL, which the page's Content-Security-Policy (worker-src 'self') forbids, so
// the page that runs it is served without that policy (cross-origin isolated all the same).
import { planGguf } from '../scripts/write_gguf.mjs';
import { writeGguf } from '../scripts/gguf/container.mjs';

const USER_DEFINED = 4; // llama_token_type

export const WLLAMA_MODULE = '/bench/node_modules/@wllama/wllama/esm/index.js';
export const WLLAMA_WASM = '/bench/node_modules/@wllama/wllama/esm/wasm/wllama.wasm';

// Writes MODEL_DIR as a GGUF of `type` (f32, q8_0, q4_0) with the id vocabulary.
export function writeIdVocabGguf(dir, file, type) {
  const plan = planGguf(dir, { type, noTokenizer: true });
  for (const m of plan.meta) {
    if (m.key === 'tokenizer.ggml.tokens') m.value = m.value.map((_, i) => `<|${i}|>`);
    if (m.key === 'tokenizer.ggml.token_type') m.value = m.value.map(() => USER_DEFINED);
    if (m.key === 'tokenizer.ggml.merges') m.value = [];
    if (m.key === 'tokenizer.ggml.add_bos_token') m.value = false;
  }
  writeGguf(file, plan.meta, plan.tensors);
}

export const idsToText = (ids) => ids.map((i) => `<|${i}|>`).join('');

// In the page: loads wllama and the GGUF at `url` (fetched whole, as a page would) on one thread,
// CPU only (n_gpu_layers 0: no WebGPU), one sequence of nCtx positions, KV cache of kvType
// ('f32' as glassbox's, or llama.cpp's default 'f16'), no flash attention (as bench/llama_cpp_peer.mjs).
// It stays on globalThis for wllamaComplete. -> { load_ms, n_ctx, threads, multithread, version }
export async function wllamaLoad(page, { url, nCtx, kvType = 'f32' }) {
  return page.evaluate(
    async ({ module, wasm, url, nCtx, kvType }) => {
      const { Wllama } = await import(module);
      const t0 = performance.now();
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
      const blob = await response.blob();
      const wllama = new Wllama({ default: wasm }, { suppressNativeLog: false });
      await wllama.loadModel([blob], {
        n_threads: 1,
        n_gpu_layers: 0,
        n_ctx: nCtx,
        n_batch: nCtx,
        n_parallel: 1,
        cache_type_k: kvType,
        cache_type_v: kvType,
        flash_attn: false,
      });
      globalThis.wllama = wllama;
      return {
        load_ms: performance.now() - t0,
        n_ctx: wllama.getLoadedContextInfo().n_ctx,
        threads: wllama.getNumThreads(),
        multithread: wllama.isMultithread(),
        version: Wllama.getLibllamaVersion(),
      };
    },
    { module: WLLAMA_MODULE, wasm: WLLAMA_WASM, url, nCtx, kvType },
  );
}

// In the page: greedy completion of `prompt` (ids) for up to maxTokens tokens, streamed and timed
// as bench/chromium_glassbox.mjs times glassbox: the prompt and the first token (prefill), then the
// tokens after it (decode). It stops early at an end-of-generation token, as glassbox does.
// -> { ids, stop, prompt_tokens, ttft_ms, prefill_tok_s, decode_tok_s, timings (wllama's own) }
export async function wllamaGenerate(page, { prompt, maxTokens }) {
  return page.evaluate(
    async ({ text, nPrompt, maxTokens }) => {
      const chunks = [];
      const t0 = performance.now();
      let first = 0;
      await globalThis.wllama.createCompletion({
        prompt: text,
        max_tokens: maxTokens,
        temperature: 0,
        cache_prompt: false,
        stream: true,
        onData: (chunk) => {
          if (!first && chunk.choices?.[0]?.text) first = performance.now();
          chunks.push(chunk);
        },
      });
      const end = performance.now();
      const last = chunks.at(-1);
      const ids = [
        ...chunks
          .map((c) => c.choices?.[0]?.text ?? '')
          .join('')
          .matchAll(/<\|(\d+)\|>/g),
      ].map((m) => Number(m[1]));
      return {
        ids,
        stop: last?.choices?.[0]?.finish_reason ?? null,
        prompt_tokens: last?.usage?.prompt_tokens ?? null,
        ttft_ms: first - t0,
        prefill_tok_s: (1000 * nPrompt) / (first - t0),
        decode_tok_s: (1000 * (ids.length - 1)) / (end - first),
        timings: last?.timings ?? null,
      };
    },
    { text: idsToText(prompt), nPrompt: prompt.length, maxTokens },
  );
}

// In the page, untimed: greedy completion with each step's `logprobs` most probable tokens, as
// [[id, log p], ...] (llama-server's probabilities before sampling: the softmax of the logits),
// reusing the KV cache of the previous request's common prefix (the cross-check's continuations).
// -> { ids, stop, prompt_tokens, top }
export async function wllamaGenerateLogprobs(page, { prompt, maxTokens, logprobs }) {
  return page.evaluate(
    async ({ text, maxTokens, logprobs }) => {
      const r = await globalThis.wllama.createCompletion({
        prompt: text,
        max_tokens: maxTokens,
        temperature: 0,
        cache_prompt: true,
        logprobs,
      });
      const choice = r.choices[0];
      const steps = choice.logprobs?.content ?? [];
      return {
        ids: steps.map((s) => s.id),
        stop: choice.finish_reason,
        prompt_tokens: r.usage?.prompt_tokens ?? null,
        top: steps.map((s) => s.top_logprobs.map((t) => [t.id, t.logprob])),
      };
    },
    { text: idsToText(prompt), maxTokens, logprobs },
  );
}
