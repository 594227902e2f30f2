// The bad-input table (docs/bad-input.md), the JS API's own rows: options objects (unknown names,
// wrong types, values shown as given), callbacks and signals that are not what they should be or
// that throw, tokenizer files that come alone, messages that cross from the engine, and dispose()
// in the middle of a generation. Each in this thread and in a worker: a bad argument is refused
// with its row's message, and the model (or the next load) works afterwards.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { estimateModel, InvalidArgumentError, loadModel, train } from '../../web/dist/glassbox.mjs';
import { loadTokenizer } from '../../web/dist/tokenizer.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { expectReject } from './bad-input-table.mjs';

const fixture = (name) => new URL(`../fixtures/${name}/`, import.meta.url);
const read = (name, file) => readFileSync(new URL(file, fixture(name)));
// gpt2-bytes: a model with vocab.json and merges.txt.
const bytes = {
  config: read('gpt2-bytes', 'config.json').toString(),
  weights: read('gpt2-bytes', 'model.safetensors'),
  vocab: read('gpt2-bytes', 'vocab.json').toString(),
  merges: read('gpt2-bytes', 'merges.txt').toString(),
};
const withConfig = (text) => ({ ...bytes, config: text });
const drain = async (steps) => {
  const ids = [];
  for await (const step of steps) ids.push(step.id);
  return ids;
};

// Model directories on disk (scratch), also served over HTTP (scratchUrl), and the repository served
// (root).
// slowUrl: gpt2-bytes, its model.safetensors sent a moment after the other files.
let scratch, scratchServer, scratchUrl, server, root, slow, slowUrl;
before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'glassbox-bad-input-api-'));
  ({ server: scratchServer, url: scratchUrl } = await startServer(scratch, 0));
  ({ server, url: root } = await startServer(new URL('../..', import.meta.url).pathname, 0));
  slow = createServer((req, res) => {
    const name = req.url.split('/').pop();
    const files = { 'config.json': bytes.config, 'vocab.json': bytes.vocab, 'merges.txt': bytes.merges };
    if (name === 'model.safetensors')
      return setTimeout(() => res.writeHead(200, { 'content-length': bytes.weights.length }).end(bytes.weights), 300);
    if (!(name in files)) return res.writeHead(404).end();
    res.writeHead(200).end(files[name]);
  });
  await new Promise((ok) => slow.listen(0, '127.0.0.1', ok));
  slowUrl = `http://127.0.0.1:${slow.address().port}/model/`;
});
after(() => {
  server.close();
  slow.close();
  scratchServer.close();
  rmSync(scratch, { recursive: true, force: true });
});

// A model directory on disk with these files (name -> contents) -> its path.
const directory = (name, files) => {
  const dir = join(scratch, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const [file, contents] of Object.entries(files)) writeFileSync(join(dir, file), contents);
  return dir;
};
// gpt2-bytes' files but those named in `left` -> {path, url}.
const without = (...left) => {
  const name = `without-${left.join('-')}`;
  const files = {
    'config.json': bytes.config,
    'model.safetensors': bytes.weights,
    'vocab.json': bytes.vocab,
    'merges.txt': bytes.merges,
  };
  for (const file of left) delete files[file];
  return { path: directory(name, files), url: `${scratchUrl}${name}/` };
};

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';

  test(`${where}: a tokenizer file without the other is an error naming it; an empty vocab.json a parse error`, async () => {
    const { merges, ...noMerges } = bytes; // eslint-disable-line no-unused-vars
    const { vocab, ...noVocab } = bytes; // eslint-disable-line no-unused-vars
    // a files object, a directory on disk, and a URL whose merges.txt is a 404
    await expectReject('B48', loadModel(noMerges, { worker }));
    await expectReject('B48', loadModel(without('merges.txt').path, { worker }));
    await expectReject('B48', loadModel(without('merges.txt').url, { worker }));
    await expectReject('B49', loadModel(noVocab, { worker }));
    await expectReject('B49', loadModel(without('vocab.json').path, { worker }));
    await expectReject('B49', loadModel(without('vocab.json').url, { worker }));
    // Neither: a model without a tokenizer, as before.
    const bare = await loadModel(without('vocab.json', 'merges.txt').url, { worker });
    await assert.rejects(bare.tokenize('a'), /no tokenizer/);
    assert.equal((await bare.forward([1, 2])).logits.length, 2 * bare.shape.vocabulary);
    await bare.dispose();
    await expectReject('B50', loadModel({ ...bytes, vocab: '' }, { worker }));
    // With onTokenizer too (the early tokenizer is made of the same files).
    let early = null;
    await expectReject('B50', loadModel({ ...bytes, vocab: '' }, { worker, onTokenizer: (t) => (early = t) }));
    assert.equal(early, null, 'no tokenizer is given early for files that cannot make one');
  });

  test(`${where}: a signal that is not an AbortSignal is refused, and the model still generates`, async () => {
    const model = await loadModel(bytes, { worker });
    await expectReject('B51', drain(model.generate([1, 2], { maxTokens: 2, signal: {} })));
    await assert.rejects(
      drain(model.generate([1, 2], { maxTokens: 2, signal: { aborted: false } })),
      /signal must be an AbortSignal, got \{aborted\}/,
    );
    assert.equal((await drain(model.generate([1, 2], { maxTokens: 3, seed: 1 }))).length, 3);
    await assert.rejects(loadModel(bytes, { worker, signal: 'stop' }), /signal must be an AbortSignal, got "stop"/);
    await expectReject('B51', loadModel(bytes, { worker, signal: {} }));
    await expectReject('B51', estimateModel(bytes, { worker, signal: {} }));
    assert.throws(() => train(['some text'], { worker, signal: {} }), /signal must be an AbortSignal, got \{\}/);
    await model.dispose();
  });

  test(`${where}: a callback that is not a function, or that throws, rejects its call and the next load works`, async () => {
    await expectReject('B52', loadModel(bytes, { worker, onProgress: 5 }));
    await assert.rejects(loadModel(bytes, { worker, onTokenizer: null }), /onTokenizer must be a function, got null/);
    const boom = new Error('the progress bar is gone');
    await assert.rejects(
      loadModel(bytes, {
        worker,
        onProgress: () => {
          throw boom;
        },
      }),
      (e) => {
        assert.ok(e instanceof InvalidArgumentError);
        assert.match(e.message, /onProgress threw: the progress bar is gone/);
        assert.equal(e.cause, boom);
        return true;
      },
    );
    await expectReject(
      'B53',
      loadModel(`${root}tests/fixtures/gpt2-bytes/`, {
        worker,
        onProgress: () => {
          throw new Error('no');
        },
      }),
    );
    // onTokenizer is called while the weights are on their way: from a server that sends them late.
    await expectReject(
      'B54',
      loadModel(slowUrl, {
        worker,
        onTokenizer: () => {
          throw new RangeError('no room for tokens');
        },
      }),
    );
    // The process is alive, and a load like it works.
    let early = null;
    const model = await loadModel(slowUrl, { worker, onProgress: () => {}, onTokenizer: (t) => (early = t) });
    assert.ok(early, 'onTokenizer was called');
    assert.deepEqual(await early.tokenize('ab'), await model.tokenize('ab'));
    await model.dispose();
  });

  test(`${where}: options that are not an object, and numbers that are not numbers, are refused with the value as given`, async () => {
    const model = await loadModel(bytes, { worker });
    await expectReject('B55', model.forward([1, 2], null));
    await assert.rejects(model.tokenize('a', 5), /tokenize's options must be an object, got 5/);
    await assert.rejects(model.classify([1], 'x'), /classify's options must be an object, got "x"/);
    await assert.rejects(drain(model.generate([1], [])), /generate's options must be an object, got \[\]/);
    await assert.rejects(loadModel(bytes, null), /loadModel's options must be an object, got null/);
    await expectReject('B56', model.forward([1, 2], { lens: 5n }));
    for (const option of ['quantize', 'sha256', 'cache', 'threads', 'worker', 'wasmPaths'])
      await assert.rejects(
        loadModel(bytes, { worker, [option]: 5n }),
        (e) => e instanceof InvalidArgumentError && e.message.includes(`${option} must be`) && e.message.includes('5n'),
      );
    await expectReject('B57', model.forward([1, 2], { lens: 4294967301 }));
    await assert.rejects(model.forward([1, 2], { lens: NaN }), /got NaN/);
    await assert.rejects(drain(model.generate([1], { lens: 2 ** 32 })), /lens must be .* got 4294967296/);
    await assert.rejects(
      model.forward([1, 2], { headMask: [[0, 2 ** 32]] }),
      /headMask must be an array of \[layer, head\] pairs of integers, like \[\[0, 3\], \[5, 1\]\], got \[\[…\]\]/,
    );
    await assert.rejects(
      drain(model.generate([1], { maxTokens: 2 ** 32 })),
      /maxTokens must be an integer >= 0, got 4294967296/,
    );
    await assert.rejects(drain(model.generate([1], { topK: 1.5 })), /topK must be an integer >= 0, got 1.5/);
    await assert.rejects(drain(model.generate([1], { seed: -1 })), /seed must be a non-negative integer, got -1/);
    await assert.rejects(drain(model.generate([1], { top: Infinity })), /top must be an integer >= 0, got Infinity/);
    await expectReject('B62', drain(model.generate([1], { temperature: null })));
    await assert.rejects(drain(model.generate([1], { topP: '0.5' })), /topP must be a number in \(0, 1\], got "0.5"/);
    await expectReject('B63', drain(model.generate([1], { attention: 'false' })));
    await assert.rejects(model.forward([1], { attention: 1 }), /attention must be true or false, got 1/);
    // (checked before a worker is sent them: a function cannot cross to it)
    await assert.rejects(model.forward([1], { headMask: [[() => 0, 0]] }), InvalidArgumentError);
    await assert.rejects(model.forward([1], { logits: () => 0 }), /logits must be .* got a function/);
    await assert.rejects(drain(model.generate([1], { headMask: [[0, () => 0]] })), InvalidArgumentError);
    await assert.rejects(model.forward([1], { hiddenStates: 'yes' }), /hiddenStates must be true or false, got "yes"/);
    await assert.rejects(model.classify([1], { attention: null }), /attention must be true or false, got null/);
    await assert.rejects(model.tokenize('a', { allowSpecial: 1 }), /allowSpecial must be true or false, got 1/);
    await assert.rejects(
      drain(model.generate([1], { contextFull: 5n })),
      /contextFull must be 'slide' or 'stop', got 5n/,
    );
    // An undefined value is as if the option were absent.
    const greedy = { maxTokens: 4, temperature: 0 };
    assert.deepEqual(
      await drain(model.generate([1, 2], { ...greedy, topK: undefined, signal: undefined, attention: undefined })),
      await drain(model.generate([1, 2], greedy)),
    );
    assert.ok((await model.forward([1], { lens: undefined, attention: undefined })).logits);
    // The model still works.
    assert.equal((await drain(model.generate([1, 2], { maxTokens: 2 }))).length, 2);
    await model.dispose();
  });

  test(`${where}: an unknown option name is an error naming it and the option it resembles`, async () => {
    const model = await loadModel(bytes, { worker });
    await expectReject('B61', drain(model.generate([1, 2], { maxToken: 2 })));
    const unknown = (call, re) => assert.rejects(call, (e) => e instanceof InvalidArgumentError && re.test(e.message));
    await unknown(
      model.forward([1], { atention: true }),
      /forward: unknown option "atention" \(did you mean "attention"\?\)/,
    );
    await unknown(model.forward([1], { lense: 3 }), /unknown option "lense" \(did you mean "lens"\?\)/);
    await unknown(
      model.classify([1], { headmask: [] }),
      /classify: unknown option "headmask" \(did you mean "headMask"\?\)/,
    );
    await unknown(
      model.tokenize('a', { allowspecial: true }),
      /tokenize: unknown option "allowspecial" \(did you mean "allowSpecial"\?\)/,
    );
    await unknown(
      model.tokenize('a', { colour: 'red' }),
      /tokenize: unknown option "colour"; its options are allowSpecial, addSpecial$/,
    );
    await unknown(
      loadModel(bytes, { worker, quantise: 'int8' }),
      /loadModel: unknown option "quantise" \(did you mean "quantize"\?\)/,
    );
    await unknown(estimateModel(bytes, { worker, quantise: 'int8' }), /estimateModel: unknown option "quantise"/);
    assert.throws(
      () => train(['text'], { worker, learningrate: 0.1 }),
      /train: unknown option "learningrate" \(did you mean "learningRate"\?\)/,
    );
    // Nothing ran: the model generates as before.
    assert.equal((await drain(model.generate([1, 2], { maxTokens: 3 }))).length, 3);
    await model.dispose();
  });

  test(`${where}: the engine's messages keep their non-ASCII text, and JSON that JSON allows is read`, async () => {
    const config = JSON.parse(bytes.config);
    await expectReject('B60', loadModel(withConfig(JSON.stringify({ ...config, model_type: 'lläma' })), { worker }));
    await expectReject(
      'B65',
      loadModel(withConfig(JSON.stringify({ ...config, model_type: 'll\u0000ama' })), { worker }),
    );
    // A byte order mark before config.json (as a string, as bytes, and as a file on disk).
    const bom = `\uFEFF${bytes.config}`;
    for (const source of [
      withConfig(bom),
      { ...bytes, config: new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(bytes.config)]) },
      directory('bom', {
        'config.json': bom,
        'model.safetensors': bytes.weights,
        'vocab.json': bytes.vocab,
        'merges.txt': bytes.merges,
      }),
    ]) {
      const model = await loadModel(source, { worker });
      assert.equal(model.config.n_layer, config.n_layer);
      await model.dispose();
    }
    // Deep nesting in a field the engine does not read.
    const depth = 50_000;
    const deep = `${bytes.config.trimEnd().slice(0, -1)}, "deep": ${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const model = await loadModel(withConfig(deep), { worker });
    assert.equal(model.config.n_layer, config.n_layer);
    await model.dispose();
  });

  test(`${where}: nothing is yielded once dispose() has resolved`, async () => {
    const model = await loadModel(bytes, { worker });
    const steps = model.generate([1, 2], { maxTokens: 50, temperature: 0, ahead: 8 });
    assert.equal((await steps.next()).done, false);
    await new Promise((resolve) => setTimeout(resolve, 50)); // (a worker has steps queued by now)
    await model.dispose();
    await expectReject('B64', steps.next());
    assert.equal((await steps.next()).done, true);
    await expectReject('B64', drain(model.generate([1, 2], { maxTokens: 2 })));
  });

  test(`${where}: training options shown as given, and a diverging run a specific error`, async () => {
    await expectReject('B59', (async () => train(['text'], { worker, learningRate: NaN }))());
    assert.throws(
      () => train(['text'], { worker, steps: 10n }),
      /steps must be an integer from 0 to 2147483647, got 10n/,
    );
    assert.throws(() => train(['text'], { worker, tokenizer: 'gpt2' }), /tokenizer must be \{vocab, merges\}/);
    const text = readFileSync(new URL('../../web/samples/brown-news.txt', import.meta.url), 'utf8').slice(0, 20_000);
    const run = train([text], {
      worker,
      vocabSize: 300,
      nLayer: 1,
      nEmbd: 16,
      nHead: 2,
      nPositions: 16,
      seqLen: 16,
      batchSize: 2,
      steps: 5,
      warmup: 0,
      learningRate: 1e30,
    });
    await expectReject(
      'B58',
      (async () => {
        for await (const _ of run); // eslint-disable-line no-unused-vars
      })(),
    );
    assert.equal(run.stopReason, 'failed');
    await run.dispose();
  });
}

// The tokenizer entry (glassbox/tokenizer) checks its options as the model's calls do: its
// tokenize is synchronous, so it throws where they reject.
test('the tokenizer entry: unknown option names, a bad signal and a non-boolean allowSpecial are refused', async () => {
  const files = { vocab: bytes.vocab, merges: bytes.merges };
  await expectReject('B51', loadTokenizer(files, { signal: {} }));
  await assert.rejects(
    loadTokenizer(files, { wasmpaths: '/' }),
    (e) =>
      e instanceof InvalidArgumentError &&
      /loadTokenizer: unknown option "wasmpaths" \(did you mean "wasmPaths"\?\)/.test(e.message),
  );
  const tokenizer = await loadTokenizer(files);
  assert.throws(
    () => tokenizer.tokenize('a', { allowSpecial: 'false' }),
    (e) => e instanceof InvalidArgumentError && /allowSpecial must be true or false, got "false"/.test(e.message),
  );
  assert.throws(
    () => tokenizer.tokenize('a', { allowspecial: true }),
    /tokenize: unknown option "allowspecial" \(did you mean "allowSpecial"\?\)/,
  );
  assert.throws(() => tokenizer.tokenize('a', null), /tokenize's options must be an object, got null/);
  assert.deepEqual(tokenizer.tokenize('ab', { allowSpecial: undefined }), tokenizer.tokenize('ab'));
  tokenizer.dispose();
});
