// The bad-input table (docs/bad-input.md) as the JS tests read it: the JS API column's message
// fragment and error class of a row, and the check that a call rejects with them. Shared by the
// test files that cover the table's rows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { GlassboxError } from '../../web/dist/glassbox.mjs';

const doc = readFileSync(new URL('../../docs/bad-input.md', import.meta.url), 'utf8');
// The `code` fragment of row `id` in the JS API column (the fifth), and the error's name after it.
export function fragment(id) {
  const line = doc.split('\n').find((l) => l.startsWith(`| ${id} |`));
  assert.ok(line, `docs/bad-input.md has a row ${id}`);
  const m = /`([^`]+)` (\w+Error)/.exec(line.split('|')[5]);
  assert.ok(m, `${id}: a \`message\` and an error name in the JS API column`);
  return { message: m[1], name: m[2] };
}
export const expectReject = async (id, promise) => {
  const want = fragment(id);
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof GlassboxError, `${id}: a GlassboxError`);
    assert.equal(e.name, want.name, `${id}: ${e.message}`);
    assert.ok(e.message.includes(want.message), `${id}: "${e.message}" should contain "${want.message}"`);
    return true;
  });
};
