// The work of the test apps (tests/package): load the shipped model (served at ./model/), stream 20
// greedy tokens, report what happened. loadModel: the API as the app imported it; label: what the
// report calls where it ran (default: worker, the option given). Also reports any
// Content-Security-Policy violation as a console error (in a page).
if (typeof document === 'object') {
  document.addEventListener('securitypolicyviolation', (e) =>
    console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
  );
}

export async function stream(loadModel, worker, label = worker) {
  try {
    const model = await loadModel(new URL('model/', location.href).href, { worker });
    const ids = [];
    const generation = model.generate('The old man walked into the', { maxTokens: 20, temperature: 0 });
    for await (const step of generation) ids.push(step.id);
    const result = {
      worker: label,
      ids,
      stopReason: generation.stopReason,
      threads: model.threads,
      cores: navigator.hardwareConcurrency,
    };
    await model.dispose();
    return result;
  } catch (e) {
    return { worker: label, error: `${e.name}: ${e.message}` };
  }
}
