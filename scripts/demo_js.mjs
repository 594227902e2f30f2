// The JS API of web/dist/glassbox.mjs in Node, on the shipped model: load it into a worker thread,
// tokenize, stream a generation with each step's attention and most probable next tokens.
// (The engine is the WebAssembly build; scripts/demo builds it first.)
import { loadModel } from '../web/dist/glassbox.mjs';

const model = await loadModel(new URL('../web/models/brown-small/', import.meta.url), { worker: true });
const c = model.config;
console.log(
  `loaded ${c.model_type}: ${c.n_layer} layers, ${c.n_head} heads, ${c.n_embd} wide, vocabulary ${c.vocab_size}`,
);
const prompt = 'The jury said';
const ids = await model.tokenize(prompt);
console.log(`tokenize(${JSON.stringify(prompt)}) ->`, JSON.stringify(ids));

let text = '';
let first;
for await (const step of model.generate(prompt, {
  maxTokens: 30,
  temperature: 0.8,
  topK: 40,
  seed: 7,
  attention: true,
  top: 5,
})) {
  text += step.text;
  first ??= step;
}
console.log(`generated: ${JSON.stringify(prompt + text)}`);

// The first step: what the model considered, and where each head of the last layer looked.
const names = await Promise.all(first.top.map((t) => model.detokenize([t.id])));
console.log(
  'after the prompt, the most probable next tokens:',
  first.top.map((t, i) => `${JSON.stringify(names[i])} ${(100 * t.probability).toFixed(1)}%`).join(', '),
);
const last = c.n_layer - 1,
  n = first.position;
const looks = [];
for (let h = 0; h < c.n_head; ++h) {
  const row = first.attention.subarray((last * c.n_head + h) * n, (last * c.n_head + h + 1) * n);
  looks.push(JSON.stringify(await model.detokenize([ids[row.indexOf(Math.max(...row))]])));
}
console.log(`layer ${last}, heads 0..${c.n_head - 1} look most at:`, looks.join(' '));
await model.dispose();
