// The worker's pipelined generate (wasm/worker.mjs computes ahead and posts steps in batches)
// against the engine in this thread, which computes each step when asked: the same seed gives the
// same steps, whatever `ahead`; an abort or return() in the middle of a batch yields nothing more
// and leaves no generation running. Shared by the Node tests (tests/js) and the browser tests;
// plain JS. Returns a report for the caller to assert on.
//
// loadModel: the API's; source: the shipped model's directory.
export async function pipelining(loadModel, source) {
  const out = {};
  const options = { maxTokens: 600, temperature: 0.8, topK: 40, topP: 0.95, seed: 3, attention: true, top: 10 };
  const take = async (model, extra = {}) => {
    const steps = [];
    for await (const s of model.generate('The jury said', { ...options, ...extra })) steps.push(s);
    return steps;
  };
  const same = (a, b) =>
    a.length === b.length &&
    a.every(
      (s, i) =>
        s.id === b[i].id &&
        s.text === b[i].text &&
        s.position === b[i].position &&
        s.windowStart === b[i].windowStart &&
        JSON.stringify(s.top) === JSON.stringify(b[i].top) &&
        s.attention.length === b[i].attention.length &&
        s.attention.every((x, k) => Object.is(x, b[i].attention[k])),
    );

  const local = await loadModel(source);
  const reference = await take(local);
  await local.dispose();
  out.steps = reference.length;
  out.slid = reference.some((s) => s.windowStart > 0);

  const model = await loadModel(source, { worker: true });
  out.pipelinedEqual = same(await take(model), reference);
  out.lockstepEqual = same(await take(model, { ahead: 1 }), reference);
  out.deepEqual = same(await take(model, { ahead: 64 }), reference);

  // An abort after 5 steps, while later ones are already queued: nothing more is yielded.
  const controller = new AbortController();
  const aborted = [];
  let result;
  const run = model.generate('The jury said', { ...options, signal: controller.signal });
  for (;;) {
    const r = await run.next();
    if (r.done) {
      result = r.value;
      break;
    }
    aborted.push(r.value);
    if (aborted.length === 5) controller.abort();
  }
  out.abortedAfter = aborted.length;
  out.abortResult = result?.stopReason;
  // return() after 3 steps.
  const left = model.generate('The jury said', options);
  for (let i = 0; i < 3; ++i) await left.next();
  out.returned = await left.return();
  out.afterReturn = await left.next();
  // No generation is left running: a new one starts at once and gives the uninterrupted steps.
  out.againEqual = same(await take(model), reference);
  out.badAhead = await model
    .generate('x', { ahead: 0 })
    .next()
    .then(
      () => '(no error)',
      (e) => `${e.name}: ${e.message}`,
    );
  await model.dispose();
  return out;
}

// The checks on pipelining()'s report, for node:test and the browser test alike.
export function checkPipelining(assert, r, where) {
  assert.equal(r.steps, 600, where);
  assert.ok(r.slid, `${where}: the generation slid past the context`);
  assert.ok(r.pipelinedEqual, `${where}: pipelined steps equal the unpipelined ones`);
  assert.ok(r.lockstepEqual && r.deepEqual, `${where}: any ahead gives the same steps`);
  assert.equal(r.abortedAfter, 5, `${where}: nothing is yielded after the abort`);
  assert.equal(r.abortResult, 'cancelled', where);
  assert.deepEqual(r.returned, { value: undefined, done: true }, where);
  assert.deepEqual(r.afterReturn, { value: undefined, done: true }, where);
  assert.ok(r.againEqual, `${where}: after an abort and a return() the next generation runs, unharmed`);
  assert.equal(r.badAhead, 'InvalidArgumentError: ahead must be an integer >= 1, got 0', where);
}
