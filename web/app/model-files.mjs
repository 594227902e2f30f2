// A model from local files: the files of a Hugging Face-layout directory, picked with a file input
// (the files, or their folder) or dropped on the page (the files, or their folder).

// A sharded checkpoint's index, which names the files its weights are in.
const INDEX = 'model.safetensors.index.json';

// files: File[] (any extra files are ignored: a hub folder's README.md, ...) -> {files, name}:
// {config, weights, vocab?, merges?, tokenizerJson?, tokenizerConfig?, chatTemplate?,
// generationConfig?}, or for a sharded checkpoint {config, index, weights: [the shards the index
// names, in its order], ...the same}. Without tokenizer.json, vocab.json and merges.txt come
// together (the tokenizer) or not at all (the model then runs on token ids). Throws an Error
// naming what is missing.
export async function pickModelFiles(files, folder = null) {
  const byName = new Map();
  for (const f of files) byName.set(f.name, f);
  const got = () =>
    files.length
      ? files
          .map((f) => f.name)
          .slice(0, 6)
          .join(', ') + (files.length > 6 ? ', …' : '')
      : 'nothing';
  const picked = { config: byName.get('config.json') };
  let weights = byName.get('model.safetensors');
  if (!weights && byName.has(INDEX)) {
    picked.index = byName.get(INDEX);
    weights = await shardsOf(picked.index, byName);
  } else if (!weights) {
    const any = files.filter((f) => f.name.endsWith('.safetensors'));
    if (any.length === 1) [weights] = any;
  }
  picked.weights = weights;
  const missing = [];
  if (!picked.config) missing.push('config.json');
  if (!weights) missing.push(`model.safetensors (or ${INDEX} and its shards)`);
  if (missing.length)
    throw new Error(
      `A model needs config.json and model.safetensors (or ${INDEX} and the shards it names); ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing (got: ${got()}).`,
    );
  // tokenizer.json is the tokenizer where it is picked (vocab.json and merges.txt are then unused);
  // the chat template's files and generation_config.json go with it.
  const extra = {
    tokenizerJson: 'tokenizer.json',
    tokenizerConfig: 'tokenizer_config.json',
    chatTemplate: 'chat_template.jinja',
    generationConfig: 'generation_config.json',
  };
  for (const [key, name] of Object.entries(extra)) if (byName.has(name)) picked[key] = byName.get(name);
  const [vocab, merges] = [byName.get('vocab.json'), byName.get('merges.txt')];
  if (!picked.tokenizerJson && Boolean(vocab) !== Boolean(merges))
    throw new Error(
      `The tokenizer needs vocab.json and merges.txt together; ${vocab ? 'merges.txt' : 'vocab.json'} is missing (got: ${got()}). Leave both out to run the model on token ids.`,
    );
  if (vocab) Object.assign(picked, { vocab, merges });
  return { files: picked, name: folder || files[0]?.webkitRelativePath?.split('/')[0] || 'local files' };
}

// The shards a sharded checkpoint's index (a File) names, from the files picked, in the order
// loadModel takes them (their names sorted); throws naming the shards that were not picked. (The
// index itself is checked again, as every source's, by loadModel.)
async function shardsOf(index, byName) {
  let names;
  try {
    names = [...new Set(Object.values(JSON.parse(await index.text()).weight_map ?? {}))].sort();
  } catch (e) {
    throw new Error(`${INDEX} is not a sharded checkpoint's index (${e.message}).`);
  }
  const absent = names.filter((n) => !byName.has(n));
  if (absent.length)
    throw new Error(
      `${INDEX} names ${names.length} shards; ${absent.join(', ')} ${absent.length === 1 ? 'is' : 'are'} missing.`,
    );
  return names.map((n) => byName.get(n));
}

// The files of a drop: plain files, or the files at the top of a dropped folder.
export async function filesFromDataTransfer(dataTransfer) {
  const entries = Array.from(dataTransfer.items ?? [])
    .filter((item) => item.kind === 'file')
    .map((item) => item.webkitGetAsEntry?.())
    .filter(Boolean);
  if (!entries.length) return { files: Array.from(dataTransfer.files ?? []), folder: null };
  const files = [];
  let folder = null;
  for (const entry of entries) {
    if (entry.isFile) files.push(await new Promise((ok, fail) => entry.file(ok, fail)));
    else if (entry.isDirectory) {
      folder ??= entry.name;
      for (const child of await readDirectory(entry)) {
        if (child.isFile) files.push(await new Promise((ok, fail) => child.file(ok, fail)));
      }
    }
  }
  return { files, folder };
}

async function readDirectory(dir) {
  const reader = dir.createReader(),
    all = [];
  for (;;) {
    // readEntries returns the entries in batches, then an empty one
    const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) return all;
    all.push(...batch);
  }
}
