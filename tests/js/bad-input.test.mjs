// The bad-input table (docs/bad-input.md), JS API column: each row's bad input given to the API
// (in this thread and in a worker) must reject with the message fragment the table shows; the
// fragments are read from the table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';

import { loadModel } from '../../web/dist/glassbox.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { expectReject } from './bad-input-table.mjs';
import { hugeModel } from './made-up-models.mjs';

const fixture = (name) => new URL(`../fixtures/${name}/`, import.meta.url);
const read = (name, file) => readFileSync(new URL(file, fixture(name)));
const f32 = { config: read('gpt2-f32', 'config.json').toString(), weights: read('gpt2-f32', 'model.safetensors') };
const withConfig = (change) => ({ ...f32, config: JSON.stringify({ ...JSON.parse(f32.config), ...change }) });

let server, root, breaking;
before(async () => {
  ({ server, url: root } = await startServer(new URL('../..', import.meta.url).pathname, 0));
  // Sends half of model.safetensors after announcing all of it, then closes the connection.
  breaking = createServer((req, res) => {
    const name = req.url.split('/').pop();
    let body;
    try {
      body = read('gpt2-bytes', name);
    } catch {
      return res.writeHead(404).end();
    }
    res.writeHead(200, { 'content-length': body.length });
    if (name !== 'model.safetensors') return res.end(body);
    res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.socket.destroy(), 50));
  });
  await new Promise((ok) => breaking.listen(0, '127.0.0.1', ok));
});
after(() => {
  server.close();
  breaking.close();
});

for (const worker of [false, true]) {
  const where = worker ? 'worker' : 'main thread';
  test(`${where}: the bad-input table, JS API column`, async () => {
    await expectReject('B1', loadModel({ ...f32, weights: f32.weights.subarray(0, 5000) }, { worker }));
    const hostile = new Uint8Array(16);
    hostile.set([8], 0);
    hostile.set(new TextEncoder().encode('notjson!'), 8);
    await expectReject('B2', loadModel({ ...f32, weights: hostile }, { worker }));
    await expectReject('B3', loadModel(withConfig({ n_embd: 64 }), { worker }));
    await expectReject('B4', loadModel(withConfig({ model_type: 'mamba' }), { worker }));
    const encoder = await loadModel(withConfig({ bidirectional: true }), { worker });
    await expectReject(
      'B23',
      (async () => {
        for await (const _ of encoder.generate([1, 2]));
      })(),
    ); // eslint-disable-line no-unused-vars
    await encoder.dispose();

    const model = await loadModel(fixture('gpt2-f32'), { worker });
    const drain = async (steps) => {
      for await (const _ of steps);
    }; // eslint-disable-line no-unused-vars
    await expectReject('B5', drain(model.generate(new Array(33).fill(1))));
    await expectReject('B8', model.forward([1, 96]));
    await expectReject('B17', model.forwardBatch([[5, 17], 3]));
    await expectReject(
      'B18',
      model.forwardBatch([
        [5, 17],
        [3, 96],
      ]),
    );
    await expectReject('B19', model.forward([1, 2], { mask: 'future' }));
    await expectReject('B21', model.classify([1, 2]));
    await expectReject('B24', model.forward([1, 2], { headMask: [[0, 4]] }));
    await expectReject('B25', model.forward([1, 2], { headMask: [0, 3] }));
    await expectReject('B26', model.forward([1, 2], { lens: 0 }));
    for (const temperature of [NaN, -1]) await expectReject('B9', drain(model.generate([1], { temperature })));
    await expectReject('B10', drain(model.generate([1], { topP: 1.5 })));
    await expectReject('B11', drain(model.generate([1], { topK: -2 })));
    const running = model.generate([1, 2], { maxTokens: 10 });
    await running.next();
    await expectReject('B16', model.generate([1, 2]).next());
    await running.return();
    await model.dispose();

    const bytes = await loadModel(fixture('gpt2-bytes'), { worker });
    await expectReject('B6', drain(bytes.generate('')));
    await expectReject('B7', bytes.tokenize('a\ud800b'));
    await bytes.dispose();

    await expectReject('B12', loadModel(hugeModel(), { worker })); // tests/js/made-up-models.mjs

    await expectReject('B13', loadModel(new URL('tests/fixtures/no-such-model/', root), { worker }));
    await expectReject('B14', loadModel(`http://127.0.0.1:${breaking.address().port}/m/`, { worker }));
    await expectReject(
      'B15',
      loadModel(new URL('tests/fixtures/gpt2-bytes/', root), { worker, sha256: '0'.repeat(64) }),
    );
  });
}
