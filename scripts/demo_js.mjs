// The JS API of web/dist/glassbox.mjs in Node: load a model, tokenize, stream a generation with
// attention. (The engine is the WebAssembly build; scripts/demo builds it first.)
import { loadModel } from '../web/dist/glassbox.mjs';

const fixtures = new URL('../tests/fixtures/', import.meta.url);
const model = await loadModel(new URL('gpt2-bytes/', fixtures), { worker: true });
const c = model.config;
console.log(`loaded ${c.model_type}: ${c.n_layer} layers, ${c.n_head} heads, vocabulary ${c.vocab_size} (byte-level)`);
console.log('tokenize("hello") ->', JSON.stringify(await model.tokenize('hello')));

let line = '';
for await (const step of model.generate('hello', { maxTokens: 12, temperature: 0.9, seed: 7, attention: true })) {
  // attention: (n_layer, n_head, position) — which earlier token each head of the last layer looked at most
  const last = c.n_layer - 1;
  const row = step.attention.subarray(last * c.n_head * step.position, (last * c.n_head + 1) * step.position);
  const focus = row.indexOf(Math.max(...row));
  line += `${step.id}(head 0 -> pos ${focus}) `;
}
console.log('generated ids:', line);
await model.dispose();
