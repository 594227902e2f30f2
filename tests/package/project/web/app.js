// A small app that uses the installed glassbox package, bundled by esbuild or Vite (tests/package):
// the shipped model's 20 greedy tokens with the engine in a worker, then in the page's thread.
import { loadModel } from 'glassbox';

import { stream } from './stream.js';

window.results = (async () => [await stream(loadModel, true), await stream(loadModel, false)])();
