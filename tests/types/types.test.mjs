// The JS API's code against its declarations, with TypeScript (npm typescript): glassbox.mjs,
// training.mjs, generation.mjs and errors.mjs are checked (their `// @ts-check`, their JSDoc
// types taken from glassbox.d.ts) by tsc with tests/types/tsconfig.json, and exports.ts holds the
// module's exports and the declared ones to each other; entries.ts does the same for the
// package's other entries (tokenizer.mjs, service-worker.mjs). Then the same check on copies with a
// declaration or the code changed on purpose must fail, naming what drifted.
//
//   node --test tests/types/          (needs npm ci for typescript; no build)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(repo, 'node_modules/.bin/tsc');

// tsc -p tests/types/tsconfig.json in `root` (the repository, or a copy of its wasm/ and
// tests/types/): {ok, output}.
function check(root) {
  try {
    execFileSync(tsc, ['-p', join(root, 'tests/types/tsconfig.json')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return { ok: true, output: '' };
  } catch (e) {
    if (e.status === null) throw e; // killed or not started: not a verdict
    return { ok: false, output: `${e.stdout}${e.stderr}` };
  }
}

test('the .mjs sources agree with glassbox.d.ts', { timeout: 120_000 }, () => {
  const { ok, output } = check(repo);
  assert.ok(ok, `tsc found drift between wasm/*.mjs and wasm/glassbox.d.ts:\n${output}`);
});

// Each: the file changed, the text replaced, and what tsc must then say.
const DRIFTS = [
  {
    what: 'the d.ts gives loadModel a parameter the code does not take',
    file: 'wasm/glassbox.d.ts',
    from: 'options?: LoadOptions): Promise<Model>;',
    to: 'options?: LoadOptions, retries: number): Promise<Model>;',
    error: /exports\.ts.*TS2\d+[\s\S]*loadModel/,
  },
  {
    what: 'the code gives train a parameter the d.ts does not declare',
    file: 'wasm/glassbox.mjs',
    from: 'export function train(texts, options = {}) {',
    to: 'export function train(texts, options = {}, backend) {',
    error: /exports\.ts.*TS2\d+[\s\S]*train/,
  },
  {
    what: 'the d.ts drops an option the code reads',
    file: 'wasm/glassbox.d.ts',
    from: '  wasmPaths?: string | URL;\n  /** For a URL source',
    to: '  /** For a URL source',
    error: /glassbox\.mjs.*TS2339.*wasmPaths/,
  },
  {
    what: 'the d.ts promises a model property the code does not set',
    file: 'wasm/glassbox.d.ts',
    from: '  readonly shape: ModelShape;\n  /** The weights',
    to: '  readonly sizes: ModelShape;\n  /** The weights',
    error: /glassbox\.mjs.*TS2420[\s\S]*sizes/,
  },
  {
    what: 'the d.ts leaves out a stop reason the code gives',
    file: 'wasm/glassbox.d.ts',
    from: "readonly stopReason: 'done' | 'cancelled' | 'failed' | undefined;",
    to: "readonly stopReason: 'done' | 'cancelled' | undefined;",
    error: /training\.mjs.*TS2322[\s\S]*failed/,
  },
  {
    what: 'the tokenizer entry exports a name its d.ts does not declare',
    file: 'wasm/tokenizer.mjs',
    from: 'export class Tokenizer {',
    to: 'export const countTokens = (text) => text.length;\nexport class Tokenizer {',
    error: /entries\.ts.*TS2322/,
  },
  {
    what: "the tokenizer's d.ts promises a method its class does not have",
    file: 'wasm/tokenizer.d.ts',
    from: '  /** Frees its memory; later calls throw a StateError. */',
    to: '  countTokens(text: string): number;\n  /** Frees its memory; later calls throw a StateError. */',
    error: /entries\.ts.*TS2719[\s\S]*loadTokenizer/,
  },
  {
    what: "the service worker's d.ts declares a function its entry does not export",
    file: 'wasm/service-worker.d.ts',
    from: '  estimateModel,',
    to: '  estimateModel,\n  train,',
    error: /entries\.ts.*TS2741[\s\S]*train/,
  },
];

test('a declaration or the code changed on purpose fails the check, naming what drifted', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'glassbox-types-'));
  try {
    for (const drift of DRIFTS) {
      for (const dir of ['wasm', 'tests/types']) cpSync(join(repo, dir), join(work, dir), { recursive: true });
      const path = join(work, drift.file),
        text = readFileSync(path, 'utf8');
      assert.ok(
        text.includes(drift.from),
        `${drift.file} no longer has ${JSON.stringify(drift.from)}: update this test`,
      );
      writeFileSync(path, text.replace(drift.from, drift.to));
      const { ok, output } = check(work);
      assert.ok(!ok, `${drift.what}: tsc passed`);
      assert.match(output, drift.error, `${drift.what}: tsc said\n${output}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
