// @ts-check
// A generation as its caller iterates it (Model.generate): the steps, one by one, and, once it has
// ended, how it ended. A `for await` loop never sees an async generator's return value, so this
// iterator keeps it: after the loop, `generation.stopReason` and `generation.text` say what
// next()'s last result carried ({done: true, value: {stopReason, text}}), which still works too.
/** @import { GenerateResult, GenerateStep, Generation as GenerationType } from './glassbox.js' */
/** @implements {GenerationType} */
export class Generation {
  #steps;
  /** @type {GenerateResult | null} */
  #end = null;

  /** @param {AsyncGenerator<GenerateStep, GenerateResult>} steps the steps; returns how it ended */
  constructor(steps) {
    this.#steps = steps;
  }

  // 'max_tokens', 'end_of_text', 'context_full' or 'cancelled' once it has ended (also after
  // leaving a loop early: 'cancelled'); undefined while it runs, or if it failed.
  get stopReason() {
    return this.#end?.stopReason;
  }
  // Bytes the decoder still held back when it ended (an unfinished character, as U+FFFD).
  get text() {
    return this.#end?.text;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  async next() {
    return this.#ended(await this.#steps.next());
  }

  // Leaving early (break, return, a throw in a for-await body) ends the generation.
  async return(value) {
    const result = await this.#steps.return(value);
    this.#end ??= { stopReason: 'cancelled' };
    return result;
  }

  async throw(error) {
    return this.#ended(await this.#steps.throw(error));
  }

  #ended(result) {
    if (result.done) this.#end ??= result.value ?? { stopReason: 'cancelled' };
    return result;
  }
}

// `await using model = await loadModel(...)` disposes of the model at the end of the block. Where
// the runtime has no Symbol.asyncDispose yet, the name TypeScript's and Babel's helpers look for.
// (Typed as the standard symbol: it is that one wherever the runtime has it.)
/** @type {typeof Symbol.asyncDispose} */
export const asyncDispose = /** @type {typeof Symbol.asyncDispose} */ (
  Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')
);
