// The Train panel's .zip (web/app/zip.mjs), read back by Info-ZIP's unzip: every entry's bytes,
// an empty file, the date, the CRC-32 check value, and the limits of a zip without Zip64.
//
//   node --test tests/page/zip.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { crc32, zipArchive } from '../../web/app/zip.mjs';

test('crc32 gives the check value of CRC-32/ISO-HDLC', () => {
  assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
});

test('unzip reads back every file, byte for byte, with its CRC checked', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'glassbox-zip-'));
  try {
    const weights = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256);
    const files = [
      { name: 'model/config.json', data: '{"n_layer": 2}' },
      { name: 'model/model.safetensors', data: weights },
      { name: 'model/vocab.json', data: '{"é": 0}' },
      { name: 'model/empty.txt', data: '' },
    ];
    const archive = zipArchive(files, new Date(2024, 5, 30, 12, 34, 56));
    assert.equal(archive.type, 'application/zip');
    const path = join(dir, 'a.zip');
    await writeFile(path, Buffer.from(await archive.arrayBuffer()));
    const listing = execFileSync('unzip', ['-Z', '-T', path], { encoding: 'utf8' });
    assert.match(listing, /4 files/);
    assert.match(listing, /20240630\.123456 model\/config\.json/, 'the date and time given');
    execFileSync('unzip', ['-q', path, '-d', join(dir, 'out')]); // exits non-zero on a bad CRC or header
    for (const { name, data } of files) {
      const want = Buffer.from(data);
      assert.ok((await readFile(join(dir, 'out', name))).equals(want), name);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('more files than a zip without Zip64 holds is a RangeError naming the count', () => {
  const files = Array.from({ length: 65_535 }, (_, i) => ({ name: `f${i}`, data: '' }));
  assert.throws(() => zipArchive(files), { name: 'RangeError', message: /at most 65,534 files, not 65535/ });
});
