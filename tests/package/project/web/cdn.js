// app.js's work with glassbox imported from another origin (the address in ?cdn=), as a page that
// takes it from a CDN does (tests/package).
import { stream } from './stream.js';

const api = import(new URL('glassbox.mjs', new URLSearchParams(location.search).get('cdn')).href);
const loadModel = async (...args) => (await api).loadModel(...args);

window.results = (async () => [await stream(loadModel, true), await stream(loadModel, false)])();
