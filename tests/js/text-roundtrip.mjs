// Text that comes back from the engine keeps every character, a leading U+FEFF (byte order mark)
// included: detokenize(tokenize(text)) === text over the tokenizer cases (the ids are tiktoken's),
// and a streamed step's text equals its token's bytes. Shared by the Node tests (tests/js) and the
// browser tests (tests/browser/page.mjs), which run it in Chromium; plain JS, no Node APIs.
import { bomModelFiles } from './made-up-models.mjs';

// loadModel: the API's; tokenizerFiles: a model with GPT-2's tokenizer; cases: cases.json's
// `ordinary` list. Returns {mismatches: [...], streamed, bomDetokenized} for the caller to assert on.
export async function textRoundTrip(loadModel, tokenizerFiles, cases, { worker }) {
  const out = { worker, mismatches: [] };
  const model = await loadModel(tokenizerFiles, { worker });
  for (const c of cases) {
    const back = await model.detokenize(c.ids);
    if (back !== c.text) out.mismatches.push({ name: c.name, text: c.text, back });
  }
  await model.dispose();

  const bom = await loadModel(bomModelFiles(), { worker });
  out.bomDetokenized = await bom.detokenize([256, 256]);
  out.streamed = [];
  for await (const step of bom.generate([65, 66], { maxTokens: 3, temperature: 0 })) out.streamed.push(step.text);
  await bom.dispose();
  return out;
}
