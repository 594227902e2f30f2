// Concurrent use of the JS API, shared by the Node tests (tests/js) and the browser tests
// (tests/browser/page.mjs): a second generate on a model whose generation is running is refused
// with a clear message (a StateError) and the running one goes on unharmed, also when both start in
// the same tick with text prompts (the first is still tokenizing when the second asks); forward and tokenize in between
// answer correctly; two models loaded side by side generate independently, step by step
// interleaved. Greedy tokens are checked against the PyTorch fixtures (expected.json).
//
// loadModel: the API's; a, b: {source, expected} of two fixture models; returns a report for the
// caller to assert on (the browser cannot assert inside the page).
export async function concurrency(loadModel, a, b, { worker }) {
  const out = { worker };
  const [ma, mb] = await Promise.all([loadModel(a.source, { worker }), loadModel(b.source, { worker })]);
  const ga = a.expected.greedy,
    gb = b.expected.greedy;
  const opts = (g) => ({ maxTokens: g.max_tokens, temperature: 0, contextFull: 'stop' });

  // A second generate while the first runs: refused, the first unharmed.
  const first = ma.generate(ga.prompt, opts(ga));
  const ids = [(await first.next()).value.id];
  out.second = await ma
    .generate(ga.prompt, opts(ga))
    .next()
    .then(
      () => '(no error)',
      (e) => e.message,
    );
  out.secondName = await ma
    .generate(ga.prompt, opts(ga))
    .next()
    .then(
      () => '(no error)',
      (e) => e.name,
    );
  // forward and tokenize between two steps of the generation
  const { logits } = await ma.forward(a.expected.tokens);
  const V = ma.config.vocab_size,
    T = a.expected.tokens.length;
  let maxDiff = 0;
  for (let v = 0; v < V; ++v)
    maxDiff = Math.max(maxDiff, Math.abs(logits[(T - 1) * V + v] - a.expected.logits[T - 1][v]));
  out.forwardMaxDiff = maxDiff;
  for (let r = await first.next(); !r.done; r = await first.next()) ids.push(r.value.id);
  out.firstIdsMatch = JSON.stringify(ids) === JSON.stringify(ga.tokens);
  // and once it has finished, generate works again
  const again = [];
  for await (const s of ma.generate(ga.prompt, opts(ga))) again.push(s.id);
  out.againIdsMatch = JSON.stringify(again) === JSON.stringify(ga.tokens);

  // Two generations with text prompts whose first steps are asked for in the same tick: the second
  // is refused; the first yields its own prompt's greedy tokens, not the second's.
  const text = await ma.detokenize(ga.prompt);
  out.textPromptRoundTrips = JSON.stringify(await ma.tokenize(text)) === JSON.stringify(ga.prompt);
  const one = ma.generate(text, opts(ga)),
    two = ma.generate('another prompt', opts(ga));
  const [r1, r2] = await Promise.allSettled([one.next(), two.next()]);
  out.sameTickSecond = r2.status === 'rejected' ? `${r2.reason.name}: ${r2.reason.message}` : '(no error)';
  const sameTick = r1.status === 'fulfilled' && !r1.value.done ? [r1.value.value.id] : [];
  for (let r = await one.next(); !r.done; r = await one.next()) sameTick.push(r.value.id);
  out.sameTickFirstIdsMatch = JSON.stringify(sameTick) === JSON.stringify(ga.tokens);

  // Two models, their generations interleaved token by token.
  const sa = ma.generate(ga.prompt, opts(ga)),
    sb = mb.generate(gb.prompt, opts(gb));
  const ia = [],
    ib = [];
  for (let da = false, db = false; !da || !db;) {
    if (!da) {
      const r = await sa.next();
      if (r.done) da = true;
      else ia.push(r.value.id);
    }
    if (!db) {
      const r = await sb.next();
      if (r.done) db = true;
      else ib.push(r.value.id);
    }
  }
  out.sideBySide = JSON.stringify(ia) === JSON.stringify(ga.tokens) && JSON.stringify(ib) === JSON.stringify(gb.tokens);
  await Promise.all([ma.dispose(), mb.dispose()]);
  return out;
}
