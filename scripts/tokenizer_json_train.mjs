// Small BPE vocabularies for the synthetic tokenizer.json fixtures
// (scripts/make_tokenizer_json_fixtures.mjs): the classic merge loop (count adjacent pairs over
// the pre-tokenized words, merge the most frequent pair, repeat), deterministic: ties go to the
// pair whose "a b" string sorts first. What matters is a vocabulary small enough to commit whose
// merges real text exercises, not a good tokenizer.

import { Tokenizer } from '@huggingface/tokenizers';

// Byte-level tokens that no merge makes: with ignore_merges a pre-token found whole in the vocab
// is one token; without it these are unreachable.
export const BYTE_LEVEL_EXTRA_TOKENS = ['\u0120glassbox', 'glassbox', '\u0120tokenizer'];

// GPT-2's bytes_to_unicode(): printable bytes map to themselves, the other 68 to U+0100.. in order.
function byteChars() {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const chars = [];
  let n = 0;
  for (let b = 0; b < 256; b++) chars.push(printable(b) ? String.fromCharCode(b) : String.fromCharCode(256 + n++));
  return chars;
}

// words: Map of word (array of symbols, null where no merge may touch) -> count.
function learnMerges(words, count) {
  const seqs = [...words].map(([symbols, n]) => ({ symbols, n }));
  const merges = [];
  for (let m = 0; m < count; m++) {
    const pairs = new Map();
    for (const { symbols, n } of seqs) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const a = symbols[i];
        const b = symbols[i + 1];
        if (a === null || b === null) continue;
        const key = `${a} ${b}`;
        pairs.set(key, (pairs.get(key) ?? 0) + n);
      }
    }
    let best = null;
    let bestCount = 1; // a pair seen once teaches nothing
    for (const [key, n] of pairs) {
      if (n > bestCount || (n === bestCount && best !== null && key < best)) {
        best = key;
        bestCount = n;
      }
    }
    if (best === null) break;
    const [a, b] = best.split(' ');
    merges.push([a, b]);
    for (const s of seqs) {
      const out = [];
      for (let i = 0; i < s.symbols.length; i++) {
        if (i + 1 < s.symbols.length && s.symbols[i] === a && s.symbols[i + 1] === b) {
          out.push(a + b);
          i++;
        } else out.push(s.symbols[i]);
      }
      s.symbols = out;
    }
  }
  return merges;
}

function countWords(pieces, toSymbols) {
  const counts = new Map();
  for (const p of pieces) counts.set(p, (counts.get(p) ?? 0) + 1);
  const words = new Map();
  for (const [p, n] of [...counts].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))) words.set(toSymbols(p), n);
  return words;
}

// Specials first, then the 256 byte characters in byte order, then merge products, then extra.
export function trainByteLevel(pipeline, texts, { specials, merges: mergeCount, extra, correct }) {
  const chars = byteChars();
  const vocab = {};
  for (const s of specials) vocab[s] = Object.keys(vocab).length;
  for (const c of chars) vocab[c] = Object.keys(vocab).length;
  // The oracle's own normalizer and pre-tokenizer split the training text.
  const probe = new Tokenizer(
    {
      added_tokens: [],
      normalizer: pipeline.normalizer,
      pre_tokenizer: pipeline.pre_tokenizer,
      post_processor: null,
      decoder: null,
      model: { type: 'BPE', vocab: { ...vocab }, merges: [] },
    },
    {},
  );
  correct(probe, { normalizer: pipeline.normalizer, pre_tokenizer: pipeline.pre_tokenizer, decoder: null }); // as the oracle that writes the fixture
  const pieces = texts.flatMap((t) => {
    const normalized = probe.normalizer ? probe.normalizer(t) : t;
    return normalized === '' ? [] : probe.pre_tokenizer(normalized, { section_index: 0 });
  });
  const merges = learnMerges(
    countWords(pieces, (p) => [...p]),
    mergeCount,
  );
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  for (const e of extra) {
    if (e in vocab) throw new Error(`trainByteLevel: ${e} is already a token (a merge makes it)`);
    vocab[e] = Object.keys(vocab).length;
  }
  return { vocab, merges };
}

// SentencePiece-style: specials, <0x00>..<0xFF>, a small alphabet (everything else falls back to
// bytes), merge products. Words are the Prepend+Replace normalized text cut before each run of ▁.
const SP_ALPHABET = (() => {
  const a = ['\u2581'];
  for (let c = 0x21; c <= 0x7e; c++) a.push(String.fromCharCode(c));
  a.push('\u00e9', '\u00fc', '\u00f1', '\u4e2d', '\u6587', '\u65e5', '\u672c', '\ud55c');
  return a;
})();

export function trainSentencePiece(texts, { specials, merges: mergeCount }) {
  const vocab = {};
  for (const s of specials) vocab[s] = Object.keys(vocab).length;
  for (let b = 0; b < 256; b++)
    vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = Object.keys(vocab).length;
  for (const c of SP_ALPHABET) vocab[c] = Object.keys(vocab).length;
  const inAlphabet = new Set(SP_ALPHABET);
  // A run of ▁ stays with the word after it, so that merges such as "▁ ▁" exist and Metaspace's
  // split (which cuts before every ▁) changes the result.
  const pieces = texts.flatMap((t) => ('\u2581' + t.replaceAll(' ', '\u2581')).split(/(?<!\u2581)(?=\u2581)/u));
  const merges = learnMerges(
    countWords(pieces, (p) => [...p].map((c) => (inAlphabet.has(c) ? c : null))),
    mergeCount,
  );
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  return { vocab, merges };
}
