// @ts-check
// The errors the JS API rejects with. Each class has a stable `name`, the same whether the engine
// runs in this thread or in a worker (errors cross the worker boundary as {name, message} and are
// made again on this side), so callers can branch on `error.name` or on `instanceof`.
//
// An abort is not one of these: a cancelled load, or a generate() whose signal was aborted before
// it started, rejects with the AbortSignal's reason (a DOMException named "AbortError" unless the
// caller gave another reason); a generation aborted while it runs ends with stopReason 'cancelled'.

/** @typedef {import('./glassbox.js').GlassboxError['name']} GlassboxErrorName */

// Base of every error the API throws on purpose.
export class GlassboxError extends Error {
  /** @type {GlassboxErrorName} */
  name = 'GlassboxError';
}

// An argument is wrong: its type, a setting out of range, an id outside the vocabulary, a prompt
// longer than the context, text that is not valid Unicode. (C++: glassbox::InvalidArgument.)
export class InvalidArgumentError extends GlassboxError {
  /** @type {'InvalidArgumentError'} */
  name = 'InvalidArgumentError';
}

// A model's files are missing, malformed, or not the expected ones (C++: glassbox::ModelFormatError).
export class ModelFormatError extends GlassboxError {
  /** @type {'ModelFormatError'} */
  name = 'ModelFormatError';
}

// A download failed: an HTTP error status, a broken connection, a server that refused the page.
export class NetworkError extends GlassboxError {
  /** @type {'NetworkError'} */
  name = 'NetworkError';
}

// The WebAssembly heap (at most 4 GB per thread) cannot hold what was asked for.
export class OutOfMemoryError extends GlassboxError {
  /** @type {'OutOfMemoryError'} */
  name = 'OutOfMemoryError';
}

// The model cannot do this now: it was disposed, its worker is gone, or a generation is running.
export class StateError extends GlassboxError {
  /** @type {'StateError'} */
  name = 'StateError';
}

// This environment lacks what the call needs (the Cache API outside a secure browser context).
export class NotSupportedError extends GlassboxError {
  /** @type {'NotSupportedError'} */
  name = 'NotSupportedError';
}

// A model's chat template failed: a syntax error (the message gives the line and column), an error
// while it rendered, or the template's own raise_exception(message), whose message it carries
// (C++: glassbox::TemplateError).
export class TemplateError extends GlassboxError {
  /** @type {'TemplateError'} */
  name = 'TemplateError';
}

export const errorClasses = {
  GlassboxError,
  InvalidArgumentError,
  ModelFormatError,
  NetworkError,
  OutOfMemoryError,
  StateError,
  NotSupportedError,
  TemplateError,
};

// An error as a worker message can carry it (structured clone keeps neither class nor name), with
// its cause (the underlying error: a failed fetch's TypeError) the same way.
export function errorToWire(e) {
  const wire = { name: e?.name ?? 'Error', message: e?.message ?? String(e) };
  if (e?.cause !== undefined && e.cause !== e) wire.cause = errorToWire(e.cause);
  return wire;
}

// The error a worker reported, made again with its class: the API's own classes by name; other
// errors (a DOMException's AbortError, an engine bug's TypeError) as an Error with the same name.
export function errorFromWire({ name, message, cause }) {
  const options = cause === undefined ? undefined : { cause: errorFromWire(cause) };
  const Class = Object.hasOwn(errorClasses, name) ? errorClasses[name] : null;
  if (Class) return new Class(message, options);
  const e = new Error(message, options);
  e.name = name;
  return e;
}
