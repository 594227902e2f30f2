// The package's other entries against their declarations, as exports.ts does for glassbox.mjs:
// the tokenizer alone (wasm/tokenizer.mjs, tokenizer.d.ts) and the service worker's
// (wasm/service-worker.mjs, service-worker.d.ts). Not run.
import * as tokenizerDeclared from '../../wasm/tokenizer.js';
import * as tokenizerImplemented from '../../wasm/tokenizer.mjs';
import * as serviceWorkerDeclared from '../../wasm/service-worker.js';
import * as serviceWorkerImplemented from '../../wasm/service-worker.mjs';

// The tokenizer's class has private fields, which make the declared class and the code's two
// unrelated types: the code is held to the declarations, and the two export the same names.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const tokenizerAsDeclared: typeof tokenizerDeclared = tokenizerImplemented;
export const tokenizerSameExports: Same<keyof typeof tokenizerDeclared, keyof typeof tokenizerImplemented> = true;
export const serviceWorkerAsDeclared: typeof serviceWorkerDeclared = serviceWorkerImplemented;
declare const serviceWorkerDeclaration: typeof serviceWorkerDeclared;
export const serviceWorkerAsImplemented: typeof serviceWorkerImplemented = serviceWorkerDeclaration;
