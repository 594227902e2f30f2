// One generation: streams steps from model.generate with attention rows and the ten most probable
// next tokens, times it (time to first token, tokens per second) and can be stopped: Stop aborts
// the signal, and the engine ends within one token (switchHeads too, for the page to go on with
// other heads).

export const TOP_TOKENS = 10;

// Steps the engine may compute beyond what the page has taken: enough for the longest pause between
// the page's frames (frame-pacer.mjs) at a few hundred tokens a second, so that the engine does not
// wait while the page draws (the messages that hand the steps over wait for the frame to end).
// Each step holds its attention rows: 64 of them are a few MB on the shipped model.
const AHEAD = 64;

export class Generation {
  #controller = new AbortController();
  stats;
  switching = false;

  // options: validated sampling options ({temperature, topK, topP, maxTokens, seed?}).
  constructor(model, promptIds, options) {
    this.model = model;
    this.promptIds = promptIds;
    // A seed is always sent (a random one when the input is empty), so the status line can show
    // it and the run can be repeated.
    this.options = { ...options, seed: options.seed ?? Math.floor(Math.random() * 2 ** 32) };
    this.stats = { tokens: 0, start: 0, first: undefined, last: undefined, seed: this.options.seed };
  }

  stop() {
    this.switching = false;
    this.#controller.abort();
  }

  // Ends the run at the next step, as Stop does, for the page to go on with other heads
  // (switching tells the two apart).
  switchHeads() {
    if (this.stopped) return;
    this.switching = true;
    this.#controller.abort();
  }

  get stopped() {
    return this.#controller.signal.aborted;
  }

  // onStep(step) is called for each token as it arrives, with step.arrived its time
  // (performance.now()); if it returns a promise, the next token is asked for only when that
  // settles. Resolves with the GenerateResult ({stopReason, text?}).
  async run(onStep) {
    this.stats.start = performance.now();
    const steps = this.model.generate(this.promptIds, {
      ...this.options,
      attention: true,
      top: TOP_TOKENS,
      ahead: AHEAD,
      signal: this.#controller.signal,
    });
    for (;;) {
      const { value, done } = await steps.next();
      if (done) return value ?? { stopReason: 'cancelled' };
      const now = performance.now();
      if (this.stats.tokens === 0) {
        this.stats.first = now;
        performance.mark('glassbox:first-token');
      }
      this.stats.last = now;
      ++this.stats.tokens;
      value.arrived = now;
      await onStep(value);
    }
  }
}
