// The sampling inputs (Temperature, Top-k, Top-p, Max tokens, Seed): read, checked, and explained
// next to the input when invalid. Invalid values are never sent to the engine.

const FIELDS = [
  {
    key: 'temperature',
    id: 'temperature',
    parse: (raw) => {
      const v = number(raw, 'Temperature');
      if (v < 0) throw new Error('Temperature must be 0 or more (0 always takes the most probable token).');
      if (v > 100) throw new Error('Temperature must be at most 100.');
      return v;
    },
  },
  {
    key: 'topK',
    id: 'top-k',
    parse: (raw) => {
      const v = integer(raw, 'Top-k');
      if (v < 0) throw new Error('Top-k must be 0 (all tokens) or more.');
      return v;
    },
  },
  {
    key: 'topP',
    id: 'top-p',
    parse: (raw) => {
      const v = number(raw, 'Top-p');
      if (!(v > 0 && v <= 1)) throw new Error('Top-p must be more than 0 and at most 1.');
      return v;
    },
  },
  {
    key: 'maxTokens',
    id: 'max-tokens',
    parse: (raw, limits) => {
      const v = integer(raw, 'Max tokens');
      if (v < 1) throw new Error('Max tokens must be at least 1.');
      if (v > limits.maxTokens) throw new Error(`Max tokens must be at most ${limits.maxTokens}.`);
      return v;
    },
  },
  {
    key: 'seed',
    id: 'seed',
    optional: true,
    parse: (raw) => {
      const v = integer(raw, 'Seed');
      if (v < 0 || v > Number.MAX_SAFE_INTEGER)
        throw new Error(`Seed must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}.`);
      return v;
    },
  },
];

function number(raw, name) {
  if (raw.trim() === '') throw new Error(`${name} is empty: enter a number.`);
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new Error(`${name} must be a number.`);
  return v;
}

function integer(raw, name) {
  const v = number(raw, name);
  if (!Number.isInteger(v)) throw new Error(`${name} must be a whole number.`);
  return v;
}

export class SamplingInputs {
  #fields;
  // Past the model's context generation goes on by sliding the window (the engine's default), so
  // the only bound is how long a person would wait: 10,000 tokens.
  #limits = { maxTokens: 10000 };

  constructor(root = document) {
    this.#fields = FIELDS.map((f) => ({
      ...f,
      input: root.getElementById(f.id),
      error: root.getElementById(`${f.id}-error`),
    }));
    for (const f of this.#fields) f.input.addEventListener('input', () => this.#check(f));
  }

  // {ok: true, options} or {ok: false, firstInvalid: <input>}; seed is undefined when empty.
  read() {
    const options = {};
    let firstInvalid = null;
    for (const f of this.#fields) {
      const r = this.#check(f);
      if (!r.ok) firstInvalid ??= f.input;
      else options[f.key] = r.value;
    }
    return firstInvalid ? { ok: false, firstInvalid } : { ok: true, options };
  }

  // Puts values in the inputs ({temperature, topK, topP, ...}; undefined ones are left as they are).
  set(values) {
    for (const f of this.#fields) {
      if (values[f.key] === undefined) continue;
      f.input.value = String(values[f.key]);
      this.#check(f);
    }
  }

  setDisabled(disabled) {
    for (const f of this.#fields) f.input.disabled = disabled;
  }

  #check(f) {
    // A number input holding text the browser cannot parse reports value '' with badInput.
    const raw = f.input.validity.badInput ? 'x' : f.input.value;
    let result;
    if (f.optional && raw.trim() === '') result = { ok: true, value: undefined };
    else {
      try {
        result = { ok: true, value: f.parse(raw, this.#limits) };
      } catch (e) {
        result = { ok: false, message: e.message };
      }
    }
    f.error.textContent = result.ok ? '' : result.message;
    f.error.hidden = result.ok;
    if (result.ok) f.input.removeAttribute('aria-invalid');
    else f.input.setAttribute('aria-invalid', 'true');
    return result;
  }
}
