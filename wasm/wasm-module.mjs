// Making one of web/dist's Emscripten modules (the engine's glassbox-core*.mjs, engine.mjs, or the
// tokenizer's glassbox-tokenizer.mjs, tokenizer.mjs) from its .wasm. The .wasm is read (Node) or
// fetched (elsewhere) and instantiated here, not by the glue: the 3.1.6 glue would fetch() a path
// in Node; given a directory (locateFile) it would send the threads' worker script there too; and
// its own failures are aborts worded for Emscripten's developers ("Build with -s ASSERTIONS=1").
// Here a file that cannot be had is named, with where it was looked for.
import { GlassboxError, NetworkError } from './errors.mjs';
import { importNode, isNode } from './platform.mjs';

// create: the glue's factory; options: the factory's other options. file: the .wasm's name, glue:
// its glue's, label: how messages name the file. needs: the Embind class the module must have (a
// .wasm of another of glassbox's modules can instantiate with this glue, and would fail later, on
// a missing function, in words of its own). bundled: its URL beside the glue, written by the
// caller as `new URL('./<file>', import.meta.url)` so that bundlers (webpack, Vite) see it and
// ship the file. wasmPaths: the directory it is served from (a URL, or a path in Node), or null.
export async function makeModule(create, { file, glue, label = file, needs, bundled, wasmPaths = null, options = {} }) {
  const where = wasmPaths ? `(${wasmPaths})` : `beside ${glue}`;
  let bytes = null;
  if (isNode) {
    const { readFile } = await importNode('fs/promises');
    bytes = await readFile(wasmPaths ? await nodePath(wasmPaths, file) : bundled).catch((e) => {
      throw new GlassboxError(`cannot read ${label} ${where}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
    });
  }
  const url = wasmPaths && !isNode ? new URL(file, wasmPaths).href : String(bundled);
  const fetched = wasmPaths ? where : `${where} (${url})`;
  let failed;
  const failure = new Promise((_, reject) => {
    failed = reject;
  });
  const instantiateWasm = (imports, receive) => {
    (bytes ? WebAssembly.instantiate(bytes, imports) : instantiateFrom(url, imports, `${label} ${fetched}`))
      .then(({ instance, module }) => receive(instance, module)) // (throws where the exports are not the glue's)
      .catch((e) =>
        failed(
          e instanceof GlassboxError
            ? e
            : new GlassboxError(
                `${label} ${isNode ? where : fetched} is not a WebAssembly module this engine can run: ${plainMessage(e)}`,
              ),
        ),
      );
    return {}; // (instantiated asynchronously)
  };
  try {
    const module = await Promise.race([create({ ...options, instantiateWasm }), failure]);
    if (typeof module[needs] !== 'function')
      throw new GlassboxError(
        `${label} ${isNode ? where : fetched} is not a WebAssembly module this engine can run: it has no ${needs}`,
      );
    return module;
  } catch (e) {
    throw e instanceof GlassboxError ? e : new GlassboxError(`${label}: ${plainMessage(e)}`);
  }
}

// WebAssembly.instantiateStreaming, or from the bytes where the server does not say application/wasm.
// what: the file and where it was looked for, for the error of a fetch that failed.
async function instantiateFrom(url, imports, what) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new NetworkError(`cannot load ${what}: ${e?.message ?? e}`, { cause: e });
  }
  if (!response.ok) throw new NetworkError(`cannot load ${what}: HTTP ${response.status}`);
  if (response.headers.get('content-type')?.split(';')[0].trim() === 'application/wasm')
    return WebAssembly.instantiateStreaming(response, imports);
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

// A file of a directory given as a path or a file: URL, in Node.
async function nodePath(dir, name) {
  if (!/^file:/.test(dir)) return (await importNode('path')).join(dir, name);
  return new URL(name, dir);
}

// An error's message without the glue's wrapping of an abort ("Aborted(...). Build with -s
// ASSERTIONS=1 for more info.").
export function plainMessage(e) {
  const message = String(e?.message ?? e);
  return /^Aborted\(([\s\S]*)\)\.?[^)]*$/.exec(message)?.[1] ?? message;
}
