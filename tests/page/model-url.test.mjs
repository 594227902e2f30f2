// What a person types in the page's "Model URL" box -> the model directory the page downloads
// (web/app/model-cache.mjs), in Node: hub ids and pages, file addresses, hosts without a scheme, and
// the addresses it refuses.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { modelDirectoryUrl } from '../../web/app/model-cache.mjs';

const page = 'http://127.0.0.1:8000/web/';

test('hub ids and hub pages become resolve/main/ directories', () => {
  const gpt2 = 'https://huggingface.co/openai-community/gpt2/resolve/main/';
  for (const typed of [
    'openai-community/gpt2',
    ' openai-community/gpt2 ',
    'https://huggingface.co/openai-community/gpt2',
    'https://huggingface.co/openai-community/gpt2/',
    'huggingface.co/openai-community/gpt2',
    'https://huggingface.co/openai-community/gpt2/tree/main',
    gpt2,
    'https://huggingface.co/openai-community/gpt2/blob/main/config.json',
    'https://huggingface.co/openai-community/gpt2/resolve/main/model.safetensors?download=true',
  ]) {
    assert.equal(modelDirectoryUrl(typed, page), gpt2, typed);
  }
  assert.equal(modelDirectoryUrl('gpt2', page), 'https://huggingface.co/gpt2/resolve/main/');
});

test("other addresses: a directory, a file in it, a host without a scheme, this page's origin", () => {
  assert.equal(modelDirectoryUrl('https://example.org/models/small', page), 'https://example.org/models/small/');
  assert.equal(
    modelDirectoryUrl('https://example.org/models/small/merges.txt#x', page),
    'https://example.org/models/small/',
  );
  assert.equal(modelDirectoryUrl('example.org/models/small/', page), 'https://example.org/models/small/');
  assert.equal(
    modelDirectoryUrl('/tests/fixtures/gpt2-bytes', page),
    'http://127.0.0.1:8000/tests/fixtures/gpt2-bytes/',
  );
  assert.equal(modelDirectoryUrl('http://127.0.0.1:8000/m/', page), 'http://127.0.0.1:8000/m/');
  // plain http from this computer (loopback), any port: a local model server
  assert.equal(modelDirectoryUrl('http://localhost:9000/m', page), 'http://localhost:9000/m/');
  assert.equal(modelDirectoryUrl('http://127.0.0.1:9000/m/', page), 'http://127.0.0.1:9000/m/');
  assert.equal(modelDirectoryUrl('http://[::1]:9000/m/', page), 'http://[::1]:9000/m/');
});

test('refused: nothing typed, plain http to another origin, other schemes', () => {
  assert.throws(() => modelDirectoryUrl('  ', page), /Enter the address of a model directory/);
  assert.throws(() => modelDirectoryUrl('http://example.org/models/small/', page), /over https:\/\/ only/);
  assert.throws(() => modelDirectoryUrl('http://127.0.0.1.example.org/m/', page), /over https:\/\/ only/);
  assert.throws(() => modelDirectoryUrl('file:///etc/', page), /over https:\/\/ only/);
  assert.throws(() => modelDirectoryUrl('javascript:alert(1)', page), /over https:\/\/ only/);
});
