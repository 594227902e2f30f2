// Types of the tokenizer-only entry (tokenizer.mjs, the package's "./tokenizer").

export { GlassboxError, InvalidArgumentError, ModelFormatError, NetworkError, StateError } from './glassbox.js';

/** Reads tokenizer.json (as Hugging Face's tokenizers library encodes), or vocab.json and
 *  merges.txt (GPT-2's byte-level BPE, byte-exact with tiktoken's "gpt2" encoding), and makes the
 *  tokenizer without the model: from a directory (a model's, whose weights are not read; a URL, a
 *  hub id 'owner/name', or a path in Node; tokenizer.json is preferred), or from the files' contents. */
export function loadTokenizer(
  source: TokenizerSource,
  options?: {
    signal?: AbortSignal;
    /** The directory glassbox-tokenizer.wasm is served from (default: beside its glue). */ wasmPaths?: string | URL;
  },
): Promise<Tokenizer>;

/** A directory (a URL, a hub id 'owner/name', or a path in Node), or the files' contents. */
export type TokenizerSource =
  | string
  | URL
  | { tokenizerJson: string | ArrayBuffer | ArrayBufferView | Blob }
  | { vocab: string | ArrayBuffer | ArrayBufferView | Blob; merges: string | ArrayBuffer | ArrayBufferView | Blob };

/** Synchronous: the tokenizer runs in the calling thread. */
export class Tokenizer {
  private constructor();
  readonly vocabSize: number;
  /** Text -> ids. Special tokens such as "<|endoftext|>" are ordinary text unless allowSpecial;
   *  addSpecial adds the post-processor's tokens (BOS...). */
  tokenize(text: string, options?: { allowSpecial?: boolean; addSpecial?: boolean }): number[];
  /** Ids -> text, special tokens included; bytes that are not whole UTF-8 characters become U+FFFD. */
  detokenize(ids: readonly number[] | Int32Array | Uint32Array): string;
  /** Frees its memory; later calls throw a StateError. */
  dispose(): void;
  /** `using tokenizer = await loadTokenizer(...)`: disposed at the end of the block. */
  [Symbol.dispose](): void;
}
