// app.js's work with the installed files imported as they are (tests/package), in a worker of the
// page's own too, and the same in a service worker (sw.js, the package's service-worker entry).
import { loadModel } from './node_modules/glassbox/glassbox.mjs';

import { stream } from './stream.js';

async function inServiceWorker() {
  const registration = await navigator.serviceWorker.register('sw.js', { type: 'module' });
  const worker = registration.installing ?? registration.waiting ?? registration.active;
  const answer = new Promise((resolve) =>
    navigator.serviceWorker.addEventListener('message', (e) => resolve(e.data), { once: true }),
  );
  worker.postMessage('run');
  return answer;
}

// A module worker of the page's own, made of the installed worker.mjs and handed to loadModel.
const ownWorker = () => new Worker(new URL('./node_modules/glassbox/worker.mjs', location.href), { type: 'module' });

window.results = (async () => [
  await stream(loadModel, true),
  await stream(loadModel, false),
  await stream(loadModel, ownWorker(), 'own worker'),
  await inServiceWorker(),
])();
