// What the engine (engine.mjs) and the tokenizer alone (tokenizer.mjs) take from a caller, checked
// the same way by both: text and token ids.
import { InvalidArgumentError } from './errors.mjs';

// JS strings can hold lone surrogates, which are not text: UTF-8 has no encoding for them.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function checkText(text, what) {
  if (typeof text !== 'string') throw new InvalidArgumentError(`${what} must be a string, got ${typeof text}`);
  if (loneSurrogate.test(text))
    throw new InvalidArgumentError(`${what} contains a lone UTF-16 surrogate, which is not valid text`);
}

// -> the ids as an Array; each must be an integer id >= 0 (the engine checks it against the vocabulary).
export function checkIds(ids, what = 'ids') {
  if (!Array.isArray(ids) && !ArrayBuffer.isView(ids))
    throw new InvalidArgumentError(`${what} must be an array of token ids`);
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff)
      throw new InvalidArgumentError(`${what}: ${id} is not a token id (an integer >= 0)`);
  }
  return Array.from(ids);
}
