// app.js's work with glassbox imported from another origin (the address in ?cdn=), as a page that
// takes it from a CDN does (tests/package).
document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));

const api = import(new URL('glassbox.mjs', new URLSearchParams(location.search).get('cdn')).href);

async function stream(worker) {
  try {
    const { loadModel } = await api;
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
