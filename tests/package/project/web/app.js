// A small app that uses the installed glassbox package, bundled by esbuild (tests/package): load
// the shipped model (served at ./model/), stream 20 greedy tokens, with the engine in a worker and
// in the page's thread. Any Content-Security-Policy violation is reported as a console error.
import { loadModel } from 'glassbox';

document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));

async function stream(worker) {
  try {
    const model = await loadModel(new URL('model/', location.href).href, { worker });
    const ids = [];
    const generation = model.generate('The old man walked into the', { maxTokens: 20, temperature: 0 });
    for await (const step of generation) ids.push(step.id);
    const result = { worker, ids, stopReason: generation.stopReason, threads: model.threads, cores: navigator.hardwareConcurrency };
    await model.dispose();
    return result;
  } catch (e) {
    return { worker, error: `${e.name}: ${e.message}` };
  }
}

window.results = (async () => [await stream(true), await stream(false)])();
