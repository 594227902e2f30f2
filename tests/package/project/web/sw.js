// A module service worker that runs the engine itself (tests/package): the package's
// service-worker entry, imported as installed.
import { loadModel } from './node_modules/glassbox/service-worker.mjs';

import { stream } from './stream.js';

self.addEventListener('message', async (e) => {
  const result = await stream(loadModel, false, 'service worker');
  result.refused = await loadModel('model/', { worker: true }).then(
    () => '(loaded)',
    (error) => error.name,
  );
  e.source.postMessage(result);
});
