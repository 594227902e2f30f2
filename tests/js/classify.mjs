// Classifiers in the JS API, shared by the Node tests (tests/js/api.test.mjs) and the browser
// tests (tests/browser/page.mjs): model.classify against PyTorch's logits on the gpt2-classifier
// fixture (F32, and int8's argmax), text input, what a model says about itself (labels,
// bidirectional, maskTokenId) and the errors; the label with its attention from one pass, and a
// masked LM's logits at chosen rows alone (forward's logits: [positions]). classifyScenario runs it and returns a report of
// plain values (the browser cannot assert inside the page); checkClassifyReport asserts on it with
// the caller's node:assert.
//
// read(name, file): a fixture file's bytes (ArrayBuffer or Uint8Array), however the caller reads them.

const text = (bytes) => new TextDecoder().decode(bytes);
const message = (promise) =>
  promise.then(
    () => '(no error)',
    (e) => `${e instanceof Error ? 'Error' : typeof e}: ${e?.message}`,
  );

// The files of fixture `name` as a loadModel source ({config, weights, vocab?, merges?}).
async function files(read, name, { tokenizer = false } = {}) {
  const out = { config: text(await read(name, 'config.json')), weights: await read(name, 'model.safetensors') };
  if (tokenizer) {
    out.vocab = text(await read(name, 'vocab.json'));
    out.merges = text(await read(name, 'merges.txt'));
  }
  return out;
}

const about = (model) => ({
  labels: [...model.labels],
  frozen: Object.isFrozen(model.labels),
  bidirectional: model.bidirectional,
  maskTokenId: model.maskTokenId,
});

export async function classifyScenario(loadModel, read, { worker }) {
  const out = { worker };
  const expected = JSON.parse(text(await read('gpt2-classifier', 'expected.json')));
  const want = expected.classify;
  const classifier = await files(read, 'gpt2-classifier');

  // PyTorch's logits; the result's shape; ids as an Int32Array give the same.
  const model = await loadModel(classifier, { worker });
  out.classifier = about(model);
  out.cases = [];
  for (const { ids, logits: reference } of want) {
    const r = await model.classify(ids);
    const typed = await model.classify(Int32Array.from(ids));
    out.cases.push({
      ids,
      reference,
      label: r.label,
      labels: r.labels,
      logits: Array.from(r.logits),
      probabilities: Array.from(r.probabilities),
      float32: r.logits instanceof Float32Array && r.probabilities instanceof Float32Array,
      typedSame: JSON.stringify(Array.from(typed.logits)) === JSON.stringify(Array.from(r.logits)),
    });
  }
  // Heads switched off: PyTorch's logits with Hugging Face's head_mask.
  out.headMasks = [];
  for (const { silenced, ids, logits: reference } of expected.classify_head_masks) {
    out.headMasks.push({
      silenced,
      reference,
      logits: Array.from((await model.classify(ids, { headMask: silenced })).logits),
    });
  }
  out.errors = {
    headOutside: await message(model.classify(want[0].ids, { headMask: [[0, 99]] })),
    headMalformed: await message(model.classify(want[0].ids, { headMask: [0, 1] })),
    text: await message(model.classify('hello')), // this fixture has no tokenizer
    empty: await message(model.classify([])),
    outOfRange: await message(model.classify([1, 96])),
    notAnId: await message(model.classify([0.5])),
    notInput: await message(model.classify(42)),
    surrogate: await message(model.classify('\ud800')),
  };
  // { attention: true }: the attention of the same pass, exactly forward's over the ids, beside
  // exactly the logits classify gives alone (heads off too); without it, no attention.
  const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  out.withAttention = [];
  for (const headMask of [undefined, [[0, 1]]]) {
    const { ids } = want[1];
    const both = await model.classify(ids, { attention: true, headMask });
    const alone = await model.classify(ids, { headMask });
    const seen = await model.forward(ids, { attention: true, logits: false, headMask });
    out.withAttention.push({
      headMask,
      float32: both.attention instanceof Float32Array,
      length: both.attention?.length,
      want: model.shape.layers * model.shape.heads * ids.length ** 2, // (L, H, T, T)
      sameAttention: same(both.attention, seen.attention),
      sameLogits: same(both.logits, alone.logits) && same(both.probabilities, alone.probabilities),
      withoutAttention: 'attention' in alone,
    });
  }
  // What classify returns is the caller's: changing it leaves the model's labels as they were.
  (await model.classify(want[0].ids)).labels[0] = 'changed';
  out.labelsAfterChange = [...model.labels];
  await model.dispose();

  // Int8 weights: the same label as PyTorch's largest logit.
  const int8 = await loadModel(classifier, { worker, quantize: 'int8' });
  out.int8 = [];
  for (const { ids } of want) out.int8.push((await int8.classify(ids)).label);
  await int8.dispose();

  // num_labels without id2label: Hugging Face's default names, from the parsed config.
  const config = JSON.parse(classifier.config);
  delete config.id2label;
  delete config.label2id;
  const numbered = await loadModel({ ...classifier, config: JSON.stringify({ ...config, num_labels: 3 }) }, { worker });
  out.numbered = { labels: [...numbered.labels], label: (await numbered.classify(want[0].ids)).label };
  await numbered.dispose();

  // Text: the classifier's weights with gpt2-bytes' byte-level tokenizer, its <|endoftext|> given
  // id 95 (the classifier's vocabulary is 0..95; printable ASCII is 0..93 in both): a string is
  // classified as its tokens followed by <|endoftext|>, exactly as those ids are. Without
  // <|endoftext|> in the vocabulary, as its tokens alone.
  const vocab = JSON.parse(text(await read('gpt2-bytes', 'vocab.json')));
  const eot = vocab['<|endoftext|>'];
  const at95 = Object.keys(vocab).find((t) => vocab[t] === 95);
  Object.assign(vocab, { [at95]: eot, '<|endoftext|>': 95 });
  const merges = text(await read('gpt2-bytes', 'merges.txt'));
  const withEot = await loadModel({ ...classifier, vocab: JSON.stringify(vocab), merges }, { worker });
  delete vocab['<|endoftext|>'];
  vocab[at95] = 95;
  const noEot = await loadModel({ ...classifier, vocab: JSON.stringify(vocab), merges }, { worker });
  const logits = async (m, input) => Array.from((await m.classify(input)).logits);
  out.text = [];
  for (const t of ['hello', 'The_sky!', 'a<|endoftext|>']) {
    const ids = await withEot.tokenize(t);
    out.text.push({
      text: t,
      ids,
      withEot: {
        text: await logits(withEot, t),
        ids: await logits(withEot, [...ids, 95]),
        idsAlone: await logits(withEot, ids),
      },
      noEot: { text: await logits(noEot, t), ids: await logits(noEot, ids) },
    });
  }
  out.textErrors = { space: await message(withEot.classify('hello world')) }; // ' ' is id 220 here: outside the classifier's 96
  await Promise.all([withEot.dispose(), noEot.dispose()]);

  // Language models: no labels, and classify is refused, for ids and text alike.
  const lm = await loadModel(await files(read, 'gpt2-f32'), { worker });
  out.lm = { ...about(lm), ids: await message(lm.classify([1, 2, 3])) };
  await lm.dispose();
  const bytes = await loadModel(await files(read, 'gpt2-bytes', { tokenizer: true }), { worker });
  out.lm.text = await message(bytes.classify('hello'));
  await bytes.dispose();

  // A bidirectional masked LM: says so, has a [MASK] id, classifies nothing and generates nothing.
  const mlm = await loadModel(await files(read, 'train-mlm'), { worker });
  out.mlm = {
    ...about(mlm),
    ids: await message(mlm.classify([1, 2, 3])),
    generate: await message(mlm.generate([1, 2], { maxTokens: 2 }).next()),
  };
  // Logits at chosen rows (a masked LM's masks): each row exactly the full pass's row there.
  const ids = [5, 63, 9, 12, 63, 7],
    rows = [1, 4];
  const full = (await mlm.forward(ids)).logits,
    some = (await mlm.forward(ids, { logits: rows })).logits,
    V = full.length / ids.length;
  out.mlm.rows = {
    length: some.length / V,
    same: rows.every((t, r) => same(some.subarray(r * V, (r + 1) * V), full.subarray(t * V, (t + 1) * V))),
    typed: same((await mlm.forward(ids, { logits: Int32Array.from(rows) })).logits, some),
    unordered: await message(mlm.forward(ids, { logits: [4, 1] })),
    outside: await message(mlm.forward(ids, { logits: [6] })),
    notPosition: await message(mlm.forward(ids, { logits: [0.5] })),
    none: await message(mlm.forward(ids, { logits: [] })),
    notList: await message(mlm.forward(ids, { logits: null })),
    withLens: await message(mlm.forward(ids, { logits: [1], lens: 3 })),
  };
  await mlm.dispose();
  return out;
}

export function checkClassifyReport(assert, r, where = r.worker ? 'worker' : 'main thread') {
  const names = ['red', 'green', 'blue'];
  const argmax = (xs) => xs.reduce((best, x, i) => (x > xs[best] ? i : best), 0);
  assert.deepEqual(
    r.classifier,
    { labels: names, frozen: true, bidirectional: false, maskTokenId: -1 },
    `${where}: the classifier`,
  );
  assert.deepEqual(r.lm.labels, [], `${where}: gpt2-f32 has no labels`);
  assert.equal(r.lm.bidirectional, false, `${where}: gpt2-f32 is causal`);
  assert.equal(r.lm.maskTokenId, -1, `${where}: gpt2-f32 has no [MASK]`);
  assert.deepEqual(r.mlm.labels, [], `${where}: train-mlm has no labels`);
  assert.equal(r.mlm.bidirectional, true, `${where}: train-mlm is bidirectional`);
  assert.equal(r.mlm.maskTokenId, 63, `${where}: train-mlm's [MASK]`);

  assert.equal(r.cases.length, 3, `${where}: the fixture's cases`);
  for (const c of r.cases) {
    const at = `${where}: ids ${JSON.stringify(c.ids)}`;
    assert.ok(c.float32, `${at}: logits and probabilities are Float32Arrays`);
    assert.ok(c.typedSame, `${at}: an Int32Array of the ids gives the same logits`);
    assert.deepEqual(c.labels, names, at);
    assert.equal(c.logits.length, 3, at);
    const diff = Math.max(...c.logits.map((x, i) => Math.abs(x - c.reference[i])));
    assert.ok(diff < 1e-4, `${at}: max |logit - PyTorch| = ${diff}`);
    assert.equal(c.label, names[argmax(c.reference)], `${at}: the label of PyTorch's largest logit`);
    const sum = c.probabilities.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-6, `${at}: probabilities sum to ${sum}`);
    const exps = c.logits.map((x) => Math.exp(x)),
      total = exps.reduce((a, b) => a + b, 0);
    for (let i = 0; i < 3; ++i)
      assert.ok(Math.abs(c.probabilities[i] - exps[i] / total) < 1e-6, `${at}: probability ${i} is the softmax's`);
  }
  assert.deepEqual(
    r.int8,
    r.cases.map((c) => names[argmax(c.reference)]),
    `${where}: int8 weights give PyTorch's labels`,
  );
  assert.deepEqual(r.labelsAfterChange, names, `${where}: a result's labels are a copy`);
  assert.deepEqual(
    r.numbered,
    { labels: ['LABEL_0', 'LABEL_1', 'LABEL_2'], label: `LABEL_${names.indexOf(r.cases[0].label)}` },
    `${where}: num_labels alone`,
  );

  assert.equal(r.headMasks.length, 3, `${where}: the head mask cases`);
  for (const c of r.headMasks) {
    const diff = Math.max(...c.logits.map((x, i) => Math.abs(x - c.reference[i])));
    assert.ok(diff < 1e-4, `${where}: heads ${JSON.stringify(c.silenced)} off: max |logit - PyTorch| = ${diff}`);
  }
  const unmasked = r.cases.at(-1).logits;
  assert.ok(
    r.headMasks.every((c) => c.logits.some((x, i) => Math.abs(x - unmasked[i]) > 1e-3)),
    `${where}: every mask changes the logits`,
  );

  const e = r.errors;
  assert.match(e.headOutside, /^Error: headMask: .*head 99/, `${where}: a head outside the model`);
  assert.match(
    e.headMalformed,
    /^Error: headMask must be an array of \[layer, head\] pairs/,
    `${where}: a malformed head mask`,
  );
  assert.match(
    e.text,
    /^Error: this model was loaded without tokenizer\.json or vocab\.json and merges\.txt: no tokenizer/,
    `${where}: text without a tokenizer`,
  );
  assert.match(e.empty, /^Error: .*no tokens/, `${where}: no ids`);
  assert.match(e.outOfRange, /^Error: token id 96 is out of range/, `${where}: an id outside the vocabulary`);
  assert.match(e.notAnId, /^Error: ids: 0\.5 is not a token id/, `${where}: not an id`);
  assert.match(e.notInput, /^Error: ids must be an array of token ids/, `${where}: neither text nor ids`);
  assert.match(e.surrogate, /^Error: text contains a lone UTF-16 surrogate/, `${where}: a lone surrogate`);

  assert.equal(r.text.length, 3);
  for (const t of r.text) {
    const at = `${where}: text ${JSON.stringify(t.text)}`;
    assert.ok(t.ids.length > 0 && t.ids.every((id) => id < 94), `${at}: printable ASCII, ids ${t.ids}`);
    assert.deepEqual(t.withEot.text, t.withEot.ids, `${at}: its tokens and <|endoftext|>`);
    assert.notDeepEqual(t.withEot.text, t.withEot.idsAlone, `${at}: (which is not the tokens alone)`);
    assert.deepEqual(t.noEot.text, t.noEot.ids, `${at}: a vocabulary without <|endoftext|>: its tokens alone`);
  }
  assert.match(
    r.textErrors.space,
    /^Error: token id \d+ is out of range/,
    `${where}: a text token outside the classifier's vocabulary`,
  );

  assert.match(r.lm.ids, /^Error: this model has no classification head/, `${where}: classify on a language model`);
  assert.match(
    r.lm.text,
    /^Error: this model has no classification head/,
    `${where}: classify(text) on a language model`,
  );
  assert.match(r.mlm.ids, /^Error: this model has no classification head/, `${where}: classify on a masked LM`);
  assert.deepEqual(
    { length: r.mlm.rows.length, same: r.mlm.rows.same, typed: r.mlm.rows.typed },
    { length: 2, same: true, typed: true },
    `${where}: logits at two rows, exactly the full pass's rows`,
  );
  assert.match(r.mlm.rows.unordered, /^Error: logit rows must be increasing positions below 6, got 1/, where);
  assert.match(r.mlm.rows.outside, /^Error: logit rows must be increasing positions below 6, got 6/, where);
  for (const e of [r.mlm.rows.notPosition, r.mlm.rows.none, r.mlm.rows.notList])
    assert.match(e, /^Error: logits must be true, false, 'last' or positions \(integers >= 0\)/, where);
  assert.match(r.mlm.rows.withLens, /^Error: logit rows go without all_logits and the lens/, where);
  assert.equal(r.withAttention.length, 2);
  for (const w of r.withAttention) {
    assert.ok(w.want > 0, `${where}: (L, H, T, T) of the classifier`);
    assert.deepEqual(
      w,
      {
        headMask: w.headMask,
        float32: true,
        length: w.want,
        want: w.want,
        sameAttention: true,
        sameLogits: true,
        withoutAttention: false,
      },
      `${where}: classify's attention, heads off ${JSON.stringify(w.headMask)}`,
    );
  }
  assert.match(r.mlm.generate, /^Error: .*does not generate text/, `${where}: generate on a bidirectional model`);
}
