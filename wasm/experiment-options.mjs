// @ts-check
// The arguments of the interpretability experiments, checked before anything runs, on both sides of
// a worker (as options.mjs checks the other calls'): patch's and attribute's, and the experiments'
// options of forward (saliency, target, neurons, neuron) and generate (steer). The engine checks
// them against the model (layers, neurons, ids) with the messages the other surfaces give.
import { InvalidArgumentError } from './errors.mjs';
import {
  checkBoolean,
  checkFunction,
  checkInteger,
  checkOptionNames,
  checkSignal,
  formatValue,
  INT_MAX,
} from './options.mjs';

// A token as a caller names it: its text as the tokenizer encodes it (one token; the engine says
// which pieces a longer text is) or its id.
/** @param {string} name @param {unknown} value */
export function checkToken(name, value) {
  if (
    value !== undefined &&
    typeof value !== 'string' &&
    !(Number.isInteger(value) && /** @type {number} */ (value) >= 0 && /** @type {number} */ (value) <= INT_MAX)
  )
    throw new InvalidArgumentError(
      `${name} must be a token's text (like " Mary") or its id (an integer >= 0), got ${formatValue(value)}`,
    );
}

// A prompt: text, or token ids (checked where the engine runs: checkIds).
/** @param {string} name @param {unknown} value */
export function checkPrompt(name, value) {
  if (typeof value !== 'string' && !Array.isArray(value) && !ArrayBuffer.isView(value))
    throw new InvalidArgumentError(`${name} must be a string or an array of token ids, got ${formatValue(value)}`);
}

// The sites of activation patching, in the order their grids are computed by default.
export const PATCH_SITES = ['resid_pre', 'attn_out', 'mlp_out', 'head'];
export const PATCH_OPTIONS = ['clean', 'corrupted', 'answer', 'wrong', 'what', 'onProgress', 'signal'];
export const ATTRIBUTE_OPTIONS = ['prompt', 'answer', 'wrong'];
const STEER_KEYS = ['layer', 'coefficient', 'plus', 'minus'];

/** @param {unknown} options */
export function checkPatchOptions(options) {
  if (options === undefined) throw new InvalidArgumentError('patch needs { clean, corrupted, answer, wrong }');
  const o = checkOptionNames(options, PATCH_OPTIONS, 'patch');
  checkPrompt('clean', o.clean);
  checkPrompt('corrupted', o.corrupted);
  for (const name of ['answer', 'wrong']) {
    if (o[name] === undefined) throw new InvalidArgumentError(`patch needs ${name} (a token's text or its id)`);
    checkToken(name, o[name]);
  }
  const { what } = o;
  if (what !== undefined && (!Array.isArray(what) || !what.every((s) => typeof s === 'string')))
    throw new InvalidArgumentError(
      `what must be an array of patching sites ('resid_pre', 'attn_out', 'mlp_out', 'head'), got ${formatValue(what)}`,
    );
  checkFunction('onProgress', o.onProgress);
  checkSignal(o.signal);
  return o;
}

/** @param {unknown} options */
export function checkAttributeOptions(options) {
  if (options === undefined) throw new InvalidArgumentError('attribute needs { prompt, answer }');
  const o = checkOptionNames(options, ATTRIBUTE_OPTIONS, 'attribute');
  checkPrompt('prompt', o.prompt);
  if (o.answer === undefined) throw new InvalidArgumentError("attribute needs answer (a token's text or its id)");
  checkToken('answer', o.answer);
  checkToken('wrong', o.wrong);
  return o;
}

// generate's steer: { layer, coefficient, plus, minus } (the engine checks the layer's range and
// that the coefficient is finite, with the message the other surfaces give).
/** @param {unknown} steer */
export function checkSteer(steer) {
  if (steer === undefined) return;
  const s = /** @type {any} */ (steer);
  if (s === null || typeof s !== 'object' || Array.isArray(s))
    throw new InvalidArgumentError(
      `steer must be { layer, coefficient, plus, minus }, like { layer: 1, coefficient: 4, plus: ' Love', minus: ' Hate' }, got ${formatValue(steer)}`,
    );
  const unknown = Object.keys(s).find((k) => !STEER_KEYS.includes(k));
  if (unknown !== undefined)
    throw new InvalidArgumentError(
      `steer: unknown key ${JSON.stringify(unknown)}; its keys are ${STEER_KEYS.join(', ')}`,
    );
  checkInteger('steer.layer', s.layer, -INT_MAX, INT_MAX, 'an integer (a layer of the model)');
  if (s.layer === undefined)
    throw new InvalidArgumentError('steer.layer must be an integer (a layer of the model), got undefined');
  if (typeof s.coefficient !== 'number')
    throw new InvalidArgumentError(`steer.coefficient must be a finite number, got ${formatValue(s.coefficient)}`);
  checkPrompt('steer.plus', s.plus);
  checkPrompt('steer.minus', s.minus);
}

// forward's experiments (its options already checked by options.mjs's checkForwardOptions).
/** @param {Record<string, any>} o */
export function checkForwardExperiments(o) {
  checkBoolean('saliency', o.saliency);
  checkToken('target', o.target);
  if (o.target !== undefined && o.saliency !== true)
    throw new InvalidArgumentError('target is the token whose saliency is computed: give it with saliency: true');
  if (o.neurons !== undefined && (!Number.isInteger(o.neurons) || o.neurons < 1 || o.neurons > INT_MAX))
    throw new InvalidArgumentError(
      `neurons must be an integer from 1 to the MLP's width (neurons per layer and position), got ${formatValue(o.neurons)}`,
    );
  const { neuron } = o;
  if (
    neuron !== undefined &&
    (neuron === null ||
      typeof neuron !== 'object' ||
      !Number.isInteger(neuron.layer) ||
      !Number.isInteger(neuron.index) ||
      Math.abs(neuron.layer) > INT_MAX ||
      Math.abs(neuron.index) > INT_MAX ||
      Object.keys(neuron).some((k) => k !== 'layer' && k !== 'index'))
  )
    throw new InvalidArgumentError(
      `neuron must be { layer, index } (integers: a layer and a neuron of its MLP), got ${formatValue(neuron)}`,
    );
  return o;
}
