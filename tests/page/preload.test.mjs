// The page preloads every module of its import graph (web/index.html's <link rel="modulepreload">),
// so that the browser fetches them all at once instead of discovering them import by import.
//
//   node --test tests/page/
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('../../web/', import.meta.url));

// Static imports and re-exports ("import ... from './x.mjs'", "export ... from", "import './x.mjs'").
function importsOf(file) {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^\s*(?:import|export)\s[^'";()]*?(?:from\s*)?['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) =>
    join(dirname(file), m[1]),
  );
}

test('index.html preloads exactly the modules app.mjs imports, directly or not, that no script tag loads', () => {
  const graph = new Set(),
    todo = [join(web, 'app.mjs')];
  while (todo.length) {
    for (const f of importsOf(todo.pop())) if (!graph.has(f)) graph.add(f) && todo.push(f);
  }
  const html = readFileSync(join(web, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)"[^>]*>/g)].map((m) => m[1]);
  const scripts = [...html.matchAll(/<script type="module"(?: async)? src="([^"]+)"[^>]*>/g)].map((m) => m[1]); // start.mjs, app.mjs
  const wanted = [...graph].map((f) => relative(web, f)).filter((f) => !scripts.includes(f));
  assert.deepEqual(preloaded.slice().sort(), wanted.sort());
  assert.ok(graph.size > 15, `the page's modules were found (${graph.size})`);
});
