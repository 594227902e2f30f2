// The documentation as a reader meets it: README.md stays a front door, every relative link and
// #anchor of README.md and docs/*.md leads somewhere, docs/architecture.md names every source file
// of the layers it describes and every shipped model, and the committed text speaks of the
// product, not of the work that made it (no numbered work sessions or issues). Needs Node only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchors, links, slug } from './markdown.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (file) => readFileSync(join(root, file), 'utf8');

// The repository's files under `paths` (relative to the root): those git tracks, or in a copy
// without git, every file but dependencies and build outputs.
function repositoryFiles(paths) {
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--', ...paths], { cwd: root, encoding: 'utf8' });
    return out.split('\0').filter((f) => f && existsSync(join(root, f)));
  } catch {
    const skip = new Set(['node_modules', 'dist', 'build', '.git']);
    const walk = (p) =>
      statSync(join(root, p)).isDirectory()
        ? readdirSync(join(root, p))
            .filter((n) => !skip.has(n))
            .flatMap((n) => walk(join(p, n)))
        : [p];
    return paths.filter((p) => existsSync(join(root, p))).flatMap(walk);
  }
}

const markdownFiles = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

// The broken links of one Markdown file: [{line, target, problem}].
function brokenLinks(file, text) {
  const problems = [];
  for (const { target, line } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not the repository's
    const [path, anchor] = target.split('#');
    const dest = path === '' ? file : relative(root, resolve(root, dirname(file), decodeURIComponent(path)));
    if (!existsSync(join(root, dest))) {
      problems.push({ line, target, problem: `${dest} does not exist` });
      continue;
    }
    if (anchor === undefined) continue;
    if (!dest.endsWith('.md'))
      problems.push({ line, target, problem: `an anchor into ${dest}, which has no headings` });
    else if (!anchors(dest === file ? text : read(dest)).has(anchor))
      problems.push({ line, target, problem: `${dest} has no heading #${anchor}` });
  }
  return problems;
}

test('the link checker reads headings and links as GitHub does, and finds a broken one', () => {
  assert.equal(slug("The package's other entries"), 'the-packages-other-entries');
  assert.equal(slug('loadModel(source, options)'), 'loadmodelsource-options');
  assert.equal(slug('Train a GPT on the page'), 'train-a-gpt-on-the-page');
  const doc = '# A\n## A\n[ok](#a-1) [bad](#b) `[code](#c)`\n```\n[block](#d)\n```\n[gone](docs/no-such-file.md)\n';
  assert.deepEqual([...anchors(doc)], ['a', 'a-1']);
  assert.deepEqual(
    links(doc).map((l) => l.target),
    ['#a-1', '#b', 'docs/no-such-file.md'],
  );
  const problems = brokenLinks('README.md', doc).map((p) => p.target);
  assert.deepEqual(problems, ['#b', 'docs/no-such-file.md']);
});

test('every relative link and #anchor of README.md and docs/*.md resolves', () => {
  const problems = markdownFiles.flatMap((file) =>
    brokenLinks(file, read(file)).map((p) => `${file}:${p.line}: (${p.target}): ${p.problem}`),
  );
  assert.deepEqual(problems, []);
});

test('every page of docs/ is reachable from README.md', () => {
  const reached = new Set();
  const visit = (file) => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const { target } of links(read(file))) {
      const path = target.split('#')[0];
      if (!path || /^[a-z][a-z0-9+.-]*:/i.test(path)) continue;
      const dest = relative(root, resolve(root, dirname(file), path));
      if (dest.endsWith('.md') && markdownFiles.includes(dest)) visit(dest);
    }
  };
  visit('README.md');
  assert.deepEqual(
    markdownFiles.filter((f) => !reached.has(f)),
    [],
  );
});

test('README.md stays a front door: at most 150 lines', () => {
  const lines = read('README.md').split('\n').length - 1;
  assert.ok(lines <= 150, `README.md has ${lines} lines; move detail into docs/`);
});

test('docs/architecture.md names every file of core/, tools/, wasm/ and web/app/, and every shipped model', () => {
  const text = read('docs/architecture.md');
  // A name counts when it stands alone: "tokenizer.mjs" in "wasm/tokenizer.mjs" or `tokenizer.mjs`,
  // not inside "glassbox-tokenizer.mjs".
  const named = (name) =>
    new RegExp(`(^|[^A-Za-z0-9_.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_-])`).test(text);
  const files = repositoryFiles(['core', 'tools', 'wasm', 'web/app', 'web/models']).filter(
    (f) => basename(f) !== 'CMakeLists.txt',
  );
  const expected = new Set();
  for (const f of files) {
    const parts = f.split('/');
    if (parts[0] === 'web' && parts[1] === 'models')
      expected.add(parts[2]); // a model's folder
    else if (parts[0] === 'wasm' && parts.length > 2)
      expected.add(`${parts[1]}/`); // wasm/package/
    else expected.add(basename(f));
  }
  assert.ok(expected.has('model.cpp') && expected.has('brown-small'), 'the file list was read');
  assert.deepEqual([...expected].filter((name) => !named(name)).sort(), []);
});

test('the committed text speaks of the product: no numbered work sessions or issues', () => {
  const pattern = /session [0-9]|issue [0-9]/i;
  const files = repositoryFiles(['README.md', 'docs', 'bench', 'tests', 'core', 'wasm', 'web', 'tools', 'scripts']);
  assert.ok(files.length > 100, `only ${files.length} files found`);
  const hits = [];
  for (const file of files) {
    const bytes = readFileSync(join(root, file));
    if (bytes.subarray(0, 8000).includes(0)) continue; // binary: weights, images
    bytes
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
  }
  assert.deepEqual(hits, []);
});
