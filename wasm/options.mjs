// @ts-check
// The options objects of the JS API, checked before anything runs, the same way in every entry and
// on both sides of a worker: an unknown name is an error (a misspelt option would otherwise be
// silently ignored), and each option has its type (booleans are booleans, numbers finite numbers,
// callbacks functions, signals AbortSignals). An option whose value is undefined is as if absent.
// Values in messages are shown as given (formatValue): NaN, 5n, "text", {…}.
import { InvalidArgumentError } from './errors.mjs';

// The largest value the engine's C++ ints take: a larger JS number would wrap around on the way in.
export const INT_MAX = 2 ** 31 - 1;

// A value as a person typed it, for messages: strings quoted, NaN and Infinity by name, bigints with
// their n, arrays and objects briefly (a whole model's worth of ids is not echoed).
/** @param {unknown} value */
export function formatValue(value, depth = 0) {
  switch (typeof value) {
    case 'string': {
      const quoted = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
      return quoted;
    }
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'function':
      return 'a function';
    case 'symbol':
      return value.toString();
    case 'undefined':
      return 'undefined';
    case 'boolean':
      return String(value);
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    if (depth > 0) return value.length ? '[…]' : '[]';
    const shown = value.slice(0, 4).map((v) => formatValue(v, depth + 1));
    return `[${shown.join(', ')}${value.length > 4 ? ', …' : ''}]`;
  }
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (typeof AbortSignal !== 'undefined' && value instanceof AbortSignal) return 'an AbortSignal';
  const name = Object.getPrototypeOf(value)?.constructor?.name;
  if (name && name !== 'Object') return `a ${name}`;
  const keys = Object.keys(/** @type {object} */ (value));
  if (depth > 0 || keys.length === 0) return keys.length ? '{…}' : '{}';
  return `{${keys.slice(0, 3).join(', ')}${keys.length > 3 ? ', …' : ''}}`;
}

// Edit distance (insertions, deletions, substitutions) between two option names, case ignored.
function distance(a, b) {
  a = a.toLowerCase();
  b = b.toLowerCase();
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; ++i) {
    const next = [i];
    for (let j = 1; j <= b.length; ++j)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

// The known name that `name` most likely misspells, or null: the nearest within a third of its length.
function closest(name, known) {
  let best = null,
    bestDistance = Infinity;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(1, Math.floor(name.length / 3)) ? best : null;
}

// options (undefined or an object of the names in `known`) -> the object (an empty one for
// undefined), else an InvalidArgumentError naming `what` (the call, e.g. "generate") and the
// unknown name, with the known one it resembles.
/**
 * @param {unknown} options
 * @param {readonly string[]} known
 * @param {string} what
 * @returns {Record<string, any>}
 */
export function checkOptionNames(options, known, what) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new InvalidArgumentError(`${what}'s options must be an object, got ${formatValue(options)}`);
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || known.includes(name)) continue;
    const near = closest(name, known);
    throw new InvalidArgumentError(
      `${what}: unknown option ${JSON.stringify(name)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}; ` +
        `its options are ${known.join(', ')}`,
    );
  }
  return /** @type {Record<string, any>} */ (options);
}

// Each check passes undefined (the option is absent) and throws an InvalidArgumentError naming the
// option and the value as given otherwise.

/** @param {string} name @param {unknown} value */
export function checkBoolean(name, value) {
  if (value !== undefined && typeof value !== 'boolean')
    throw new InvalidArgumentError(`${name} must be true or false, got ${formatValue(value)}`);
}

// An integer from min to max (the C++ int the engine takes it as, by default).
/** @param {string} name @param {unknown} value */
export function checkInteger(name, value, min = 0, max = INT_MAX, what = `an integer from ${min} to ${max}`) {
  if (
    value !== undefined &&
    (!Number.isInteger(value) || /** @type {number} */ (value) < min || /** @type {number} */ (value) > max)
  )
    throw new InvalidArgumentError(`${name} must be ${what}, got ${formatValue(value)}`);
}

// A number (its range is the engine's to check, with the message the other surfaces give); NaN and
// the infinities pass here for the same reason.
/** @param {string} name @param {unknown} value @param {string} what */
export function checkNumber(name, value, what) {
  if (value !== undefined && typeof value !== 'number')
    throw new InvalidArgumentError(`${name} must be ${what}, got ${formatValue(value)}`);
}

/** @param {string} name @param {unknown} value */
export function checkFunction(name, value) {
  if (value !== undefined && typeof value !== 'function')
    throw new InvalidArgumentError(`${name} must be a function, got ${formatValue(value)}`);
}

// An AbortSignal (of this realm or another: anything with its aborted, reason, throwIfAborted and
// listeners).
/** @param {unknown} value */
export function checkSignal(value, name = 'signal') {
  const s = /** @type {any} */ (value);
  if (
    value !== undefined &&
    (s === null ||
      typeof s !== 'object' ||
      typeof s.aborted !== 'boolean' ||
      typeof s.throwIfAborted !== 'function' ||
      typeof s.addEventListener !== 'function' ||
      typeof s.removeEventListener !== 'function')
  )
    throw new InvalidArgumentError(`${name} must be an AbortSignal, got ${formatValue(value)}`);
}

// One of the strings of `choices`.
/** @param {string} name @param {unknown} value @param {readonly string[]} choices */
export function checkChoice(name, value, choices) {
  if (value !== undefined && !choices.includes(/** @type {string} */ (value)))
    throw new InvalidArgumentError(
      `${name} must be ${choices.map((c) => `'${c}'`).join(' or ')}, got ${formatValue(value)}`,
    );
}

// A callback of the caller's, called so that what it throws ends the call that invoked it instead of
// escaping into an event handler (where Node ends the process): fail(error) gets an
// InvalidArgumentError naming the option, with the callback's error as its cause, and the callback
// is not called again.
/**
 * @template {(...args: any[]) => unknown} F
 * @param {string} name
 * @param {F | undefined} callback
 * @param {(error: InvalidArgumentError) => void} fail
 * @returns {F | undefined}
 */
export function guardCallback(name, callback, fail) {
  if (!callback) return undefined;
  let failed = false;
  return /** @type {F} */ (
    (...args) => {
      if (failed) return undefined;
      try {
        return callback(...args);
      } catch (e) {
        failed = true;
        const error = new InvalidArgumentError(`${name} threw: ${e?.message ?? formatValue(e)}`, { cause: e });
        fail(error);
        return undefined;
      }
    }
  );
}

// The options of each call, by name (glassbox.d.ts).
export const LOAD_OPTIONS = [
  'onProgress',
  'onTokenizer',
  'worker',
  'signal',
  'threads',
  'wasmPaths',
  'cache',
  'quantize',
  'sha256',
  'contextLength',
];
export const ESTIMATE_OPTIONS = ['quantize', 'contextLength', 'signal', 'worker', 'wasmPaths'];
export const TOKENIZE_OPTIONS = ['allowSpecial', 'addSpecial'];
export const FORWARD_OPTIONS = [
  'attention',
  'logits',
  'mask',
  'hiddenStates',
  'lens',
  'headMask',
  'saliency',
  'target',
  'neurons',
  'neuron',
];
export const CLASSIFY_OPTIONS = ['headMask', 'attention'];
export const GENERATE_OPTIONS = [
  'maxTokens',
  'temperature',
  'topK',
  'topP',
  'seed',
  'signal',
  'attention',
  'top',
  'lens',
  'headMask',
  'allowSpecial',
  'contextFull',
  'ahead',
  'repetitionPenalty',
  'steer',
];
export const CHAT_TEMPLATE_OPTIONS = ['addGenerationPrompt', 'date', 'templateVars'];
// chat's: generate's (but allowSpecial: the rendered conversation's special tokens are always read)
// and the template's.
export const CHAT_OPTIONS = [...GENERATE_OPTIONS.filter((name) => name !== 'allowSpecial'), ...CHAT_TEMPLATE_OPTIONS];

// The options of forward, classify and generate that look inside: lens (K, each layer's K most
// probable next tokens; absent: none) and headMask ([[layer, head], ...]: those heads switched off,
// Hugging Face's head_mask). -> {lens (0: none), headMask (or null)}. The engine checks them
// against the model: K up to its vocabulary, layers and heads it has.
/** @param {{ lens?: any, headMask?: any }} options */
export function inspectOptions({ lens, headMask }) {
  if (lens !== undefined && (!Number.isInteger(lens) || lens < 1 || lens > INT_MAX))
    throw new InvalidArgumentError(
      `lens must be an integer from 1 to the vocabulary's size (tokens per layer), got ${formatValue(lens)}`,
    );
  const index = (x) => Number.isInteger(x) && Math.abs(x) <= INT_MAX; // (the engine says which are out of range)
  if (
    headMask !== undefined &&
    headMask !== null &&
    (!Array.isArray(headMask) ||
      !headMask.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every(index)))
  )
    throw new InvalidArgumentError(
      `headMask must be an array of [layer, head] pairs of integers, like [[0, 3], [5, 1]], got ${formatValue(headMask)}`,
    );
  return { lens: lens ?? 0, headMask: headMask ?? null };
}

// (The experiments' options, saliency and the rest, and steer, are checked by
// experiment-options.mjs: the tokenizer entry, which imports this file, has no use for them.)

// The checks of each call's options that need no model, made where the call is made (so that a
// worker is never sent what it cannot take) and again where it runs. -> the options object.
/** @param {unknown} options */
export function checkTokenizeOptions(options) {
  const o = checkOptionNames(options, TOKENIZE_OPTIONS, 'tokenize');
  checkBoolean('allowSpecial', o.allowSpecial);
  checkBoolean('addSpecial', o.addSpecial);
  return o;
}

/** @param {unknown} options */
export function checkForwardOptions(options) {
  const o = checkOptionNames(options, FORWARD_OPTIONS, 'forward');
  checkBoolean('attention', o.attention);
  checkBoolean('hiddenStates', o.hiddenStates);
  checkChoice('mask', o.mask, ['causal', 'bidirectional']);
  const { logits } = o;
  const rows = logits !== null && typeof logits === 'object' ? Array.from(logits) : [];
  const valid = rows.length && rows.every((t) => Number.isInteger(t) && t >= 0 && t <= INT_MAX);
  if (logits !== undefined && logits !== true && logits !== false && logits !== 'last' && !valid)
    throw new InvalidArgumentError(
      `logits must be true, false, 'last' or positions (integers >= 0), got ${formatValue(logits)}`,
    );
  inspectOptions(o);
  return o;
}

/** @param {unknown} options */
export function checkClassifyOptions(options) {
  const o = checkOptionNames(options, CLASSIFY_OPTIONS, 'classify');
  checkBoolean('attention', o.attention);
  inspectOptions(o);
  return o;
}

/** @param {unknown} options */
export function checkGenerateOptions(options, names = GENERATE_OPTIONS, call = 'generate') {
  const o = checkOptionNames(options, names, call);
  checkInteger('maxTokens', o.maxTokens, 0, INT_MAX, 'an integer >= 0');
  checkNumber('temperature', o.temperature, 'a finite number >= 0');
  checkInteger('topK', o.topK, -INT_MAX, INT_MAX, 'an integer >= 0');
  checkNumber('topP', o.topP, 'a number in (0, 1]');
  checkInteger('seed', o.seed, 0, Number.MAX_SAFE_INTEGER, 'a non-negative integer');
  checkSignal(o.signal);
  checkBoolean('attention', o.attention);
  checkInteger('top', o.top, 0, INT_MAX, 'an integer >= 0');
  checkBoolean('allowSpecial', o.allowSpecial);
  checkChoice('contextFull', o.contextFull, ['slide', 'stop']);
  checkInteger('ahead', o.ahead, 1, INT_MAX, 'an integer >= 1');
  checkNumber('repetitionPenalty', o.repetitionPenalty, 'a finite number > 0');
  inspectOptions(o);
  return o;
}

// applyChatTemplate's options: addGenerationPrompt (default true), date ('YYYY-MM-DD', the day
// strftime_now gives; the engine checks the form), templateVars (a plain object of the template's
// variables, such as { enable_thinking: false }).
/** @param {unknown} options */
export function checkChatTemplateOptions(options, names = CHAT_TEMPLATE_OPTIONS, call = 'applyChatTemplate') {
  const o = checkOptionNames(options, names, call);
  checkBoolean('addGenerationPrompt', o.addGenerationPrompt);
  if (o.date !== undefined && typeof o.date !== 'string')
    throw new InvalidArgumentError(`date must be a string 'YYYY-MM-DD', got ${formatValue(o.date)}`);
  const vars = o.templateVars;
  if (vars !== undefined && (vars === null || typeof vars !== 'object' || Array.isArray(vars)))
    throw new InvalidArgumentError(
      `templateVars must be an object of the template's variables, like { enable_thinking: false }, got ${formatValue(vars)}`,
    );
  return o;
}

// chat's options: generate's and the template's.
/** @param {unknown} options */
export function checkChatOptions(options) {
  const o = checkGenerateOptions(options, CHAT_OPTIONS, 'chat');
  checkChatTemplateOptions(
    Object.fromEntries(CHAT_TEMPLATE_OPTIONS.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])),
  );
  return o;
}

// A conversation as the engine takes it: JSON text of an array of message objects.
export function messagesJson(messages) {
  if (!Array.isArray(messages) || !messages.every((m) => m !== null && typeof m === 'object' && !Array.isArray(m)))
    throw new InvalidArgumentError(
      `messages must be an array of message objects like { role: 'user', content: 'Hi' }, got ${formatValue(messages)}`,
    );
  return jsonOf(messages, 'messages');
}

// JSON text of a value given to the template (messages, templateVars); a value JSON cannot hold
// (a cycle, a BigInt) is an InvalidArgumentError naming it. A whole number past JavaScript's safe
// integers (2^53) is written as the float it is (1.2345678901234567e+19, as Python writes it), not
// as digits that read back as another integer.
export function jsonOf(value, what) {
  const mark = `\u0001glassbox-float-${Math.random().toString(36).slice(2)}:`;
  let text;
  try {
    text = JSON.stringify(value, (_, v) =>
      typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v) ? mark + v.toExponential() : v,
    );
  } catch (e) {
    throw new InvalidArgumentError(`${what} cannot be given to the chat template as JSON: ${e.message}`);
  }
  const quoted = JSON.stringify(mark).slice(0, -1); // the mark as JSON writes it, after the opening quote
  return text.split(quoted).length === 1 ? text : text.replace(new RegExp(`${escape(quoted)}([^"]*)"`, 'g'), '$1');
}

const escape = (s) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
