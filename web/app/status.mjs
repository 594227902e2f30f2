// The status line (role=status): what the page is doing, and for a generation the time to the
// first token and the tokens per second. While tokens stream, it is rewritten at most a few times
// a second, so that a screen reader is not flooded.

const STOP_REASONS = {
  max_tokens: 'reached Max tokens',
  end_of_text: 'the model ended the text',
  context_full: 'the context is full',
  cancelled: 'stopped',
};

export class StatusLine {
  #el;
  #lastWrite = 0;

  constructor(el) {
    this.#el = el;
  }

  set(text, kind = '') {
    this.#el.textContent = text;
    this.#el.dataset.kind = kind;
    this.#lastWrite = performance.now();
  }

  // During a generation: only every 400 ms (and always the first token).
  progress(stats, { force = false } = {}) {
    if (!force && performance.now() - this.#lastWrite < 400) return;
    this.set(`Generating… ${formatStats(stats)}`, 'busy');
  }

  done(stats, stopReason) {
    this.set(
      `${stats.tokens ? 'Done' : 'Nothing generated'}: ${STOP_REASONS[stopReason] ?? stopReason}. ${formatStats(stats)}`,
      'done',
    );
  }
}

// stats: {tokens, start, first, last, seed}: times from performance.now().
export function formatStats({ tokens, start, first, last, seed }) {
  const parts = [`${tokens} token${tokens === 1 ? '' : 's'}`];
  if (first !== undefined) parts.push(`first token ${Math.round(first - start)} ms`);
  // Tokens per second after the first one (the first includes the prompt's own pass).
  if (tokens >= 2 && last > first) parts.push(`${((tokens - 1) / ((last - first) / 1000)).toFixed(1)} tokens/s`);
  else if (tokens === 1) parts.push('– tokens/s');
  if (seed !== undefined) parts.push(`seed ${seed}`);
  return parts.join(' · ');
}
