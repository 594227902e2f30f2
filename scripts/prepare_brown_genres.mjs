// The shipped classifier's data: the Brown corpus's paragraphs, each labelled with the kind of
// writing its document is (the corpus's 15 genres in three groups), as `glassbox train --task
// classify` reads them: "label<TAB>text" lines. The split is the shipped GPT's (prepare_brown.mjs):
// every tenth document in file-id order is held out for validation.
//
//   node scripts/prepare_brown_genres.mjs OUTDIR   -> OUTDIR/genre-train.tsv, OUTDIR/genre-valid.tsv
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brownDocument, brownIds } from './brown_text.mjs';

// The corpus's genre letters (the second letter of a document's id): press (A reportage,
// B editorial, C reviews), fiction (K general, L mystery, M science fiction, N adventure,
// P romance, R humor), and the other prose (D religion, E skills and hobbies, F popular lore,
// G belles-lettres, H government, J learned).
const GROUPS = { news: 'abc', fiction: 'klmnpr', nonfiction: 'defghj' };
const labelOf = (id) => Object.keys(GROUPS).find((g) => GROUPS[g].includes(id[1]));

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/prepare_brown_genres.mjs OUTDIR');
  process.exit(2);
}
const ids = brownIds();
mkdirSync(out, { recursive: true });
for (const [name, keep] of [
  ['genre-train.tsv', (i) => i % 10 !== 9],
  ['genre-valid.tsv', (i) => i % 10 === 9],
]) {
  const lines = [];
  for (const [i, id] of ids.entries()) {
    if (!keep(i)) continue;
    for (const paragraph of brownDocument(id).split('\n\n')) {
      const text = paragraph.replace(/\s+/g, ' ').trim();
      if (text.split(' ').length >= 8) lines.push(`${labelOf(id)}\t${text}`); // a sentence or more
    }
  }
  writeFileSync(join(out, name), lines.join('\n') + '\n');
  const count = (l) => lines.filter((x) => x.startsWith(`${l}\t`)).length;
  console.error(
    `prepare_brown_genres: ${name}: ${lines.length} paragraphs (${Object.keys(GROUPS)
      .map((l) => `${l} ${count(l)}`)
      .join(', ')})`,
  );
}
