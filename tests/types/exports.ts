// The JS API's exports (wasm/glassbox.mjs, checked with its JSDoc types) are the ones its
// declarations (wasm/glassbox.d.ts) promise, and the declarations describe what it exports: each
// is assignable to the other, so an export missing on either side, a parameter more or less, or
// a result of another shape fails tsc (tests/types/types.test.mjs). Not run.
import * as declared from '../../wasm/glassbox.js';
import * as implemented from '../../wasm/glassbox.mjs';

export const asDeclared: typeof declared = implemented;
declare const declaration: typeof declared;
export const asImplemented: typeof implemented = declaration;
