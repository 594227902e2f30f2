// Case texts that scripts/make_tokenizer_json_fixtures.mjs adds to the GPT-2 list
// (tests/fixtures/tokenizer/cases.json): what matters for normalizers (NFC), other regexes,
// SentencePiece's ▁ and byte fallback, and each tokenizer's own special tokens in text.

export function extraCases() {
  const cases = [];
  const add = (kind, name, text) => cases.push({ name: `${kind}/${name}`, kind, text });

  // Composed and decomposed forms: NFC changes the text before the model sees it.
  const COMBINING = [
    ['e-acute-decomposed', 'cafe\u0301 cafe\u0301s'],
    ['e-acute-composed', 'caf\u00e9 caf\u00e9s'],
    ['vietnamese', 'Ti\u1ebfng Vi\u1ec7t c\u00f3 d\u1ea5u: Vie\u0302\u0323t Nam'],
    ['hangul-jamo', '\u1112\u1161\u11ab\u1100\u1173\u11af \ud55c\uae00'],
    ['angstrom-ohm', '\u212b \u2126 \u00c5 \u03a9'],
    ['double-combining', 'a\u0301\u0302\u0303 o\u0308\u0304'],
    ['combining-after-space', 'word \u0301word'],
    ['devanagari-nukta', '\u0915\u093c \u0958'],
    ['compatibility', '\ufb01ne \u2460 \uff21\uff22 \u00bd \u2122'],
  ];
  for (const [name, text] of COMBINING) add('combining', name, text);

  const MORE = [
    [
      'cjk/chinese-sentence-punct',
      '\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u5427\uff01',
    ],
    ['cjk/japanese-sentence', '\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002'],
    ['arabic/quran-style', '\u0628\u0650\u0633\u0652\u0645\u0650 \u0627\u0644\u0644\u0651\u064e\u0647\u0650'],
    ['arabic/digits-mixed', '\u0627\u0644\u0633\u0639\u0631 123 \u062f\u0648\u0644\u0627\u0631 \u0661\u0662\u0663'],
    ['emoji/zwj-rainbow-flag', '\u{1F3F3}\ufe0f\u200d\u{1F308} flag'],
    ['emoji/zwj-couple-kiss', '\u{1F469}\u200d\u2764\ufe0f\u200d\u{1F48B}\u200d\u{1F468}'],
    ['emoji/zwj-skin-tones', '\u{1F9D1}\u{1F3FD}\u200d\u{1F91D}\u200d\u{1F9D1}\u{1F3FF}'],
    ['emoji/keycap-sequence', '#\ufe0f\u20e3 *\ufe0f\u20e3 0\ufe0f\u20e3'],
    ['digits/run-in-words', 'abc1234567def 12345678901234567890'],
    ['digits/mixed-separators', '1,234,567.89 1.234.567,89 1 234 567'],
    ['crlf/lines-indented', 'if (x) {\r\n    y();\r\n}\r\n'],
    ['crlf/cr-lf-mixed', 'a\r\n\r\nb\n\rc\r\rd'],
    ['crlf/crlf-spaces', 'line  \r\n  next\r\n'],
    ['spaces/leading-trailing-words', '   three words here   '],
    ['spaces/single-leading', ' x'],
    ['spaces/only-two', '  '],
    ['spaces/tab-leading', '\tindented\t'],
    ['sentencepiece/lower-one-eighth-block', 'a\u2581b \u2581 \u2581\u2581'],
    ['sentencepiece/byte-token-text', '<0x41> <0xFF> <0x0A>'],
    ['sentencepiece/unk-text', '<unk> unk <UNK>'],
    ['vocab/glassbox', 'glassbox tokenizer glassboxes'],
  ];
  // Long runs, shorter than the GPT-2 list's (which this list leaves out).
  MORE.push(
    ['long/letter-x600', 'a'.repeat(600)],
    ['long/spaces300-then-letter', ' '.repeat(300) + 'x'],
    ['long/digits200', '31415926535897932384626433832795028841971693993751'.repeat(4)],
    ['long/newlines100-then-text', '\n'.repeat(100) + 'text'],
    ['long/emoji50', '\u{1F600}'.repeat(50)],
    ['long/spaces100-trailing', 'end' + ' '.repeat(100)],
    ['long/crlf50', 'x\r\n'.repeat(50)],
  );
  for (const [full, text] of MORE) {
    const [kind, name] = full.split('/');
    add(kind, name, text);
  }
  return cases;
}

// Texts with a tokenizer's special (or added) tokens written in them. The first is the one the
// add_special section uses too.
export function specialCases(specials) {
  const cases = [];
  specials.forEach((s, k) => {
    const T = [
      ['alone', s],
      ['in-middle', `Hello${s}world`],
      ['spaced', `end of doc ${s} start of next`],
      ['spaces-around', `a   ${s}   b`],
      ['newlines', `doc one\n${s}\ndoc two`],
      ['twice-adjacent', s + s],
      ['leading-trailing-space', ` ${s} `],
      ['contraction-split', `it${s}'s`],
      ['digits-split', `12${s}34`],
      ['emoji-around', `\u{1F600}${s}\u{1F600}`],
      ['uppercase-not-special', s.toUpperCase()],
      ['partial', s.slice(0, -1) + ' ' + s.slice(1)],
      ['nested', `<${s}>`],
      ['cjk-around', `\u4e2d${s}\u6587`],
    ];
    for (const [name, text] of T) cases.push({ name: `special_text_own/${k}-${name}`, kind: 'special_text_own', text });
  });
  if (specials.length > 1) {
    const [a, b] = specials;
    cases.push({
      name: 'special_text_own/two-kinds',
      kind: 'special_text_own',
      text: `${a}user\nHi there${b}\n${a} ok`,
    });
  }
  return cases;
}

// Texts where the Whitespace pre-tokenizer's Unicode \w (Alphabetic, marks, Nd, Pc, Join_Control)
// and JavaScript's ASCII \w part ways; only the fixture of that pre-tokenizer has them.
export function whitespaceCases() {
  return [
    ['accented', 'na\u00efve caf\u00e9 \u00dcber-stra\u00dfe \u0141\u00f3d\u017a'],
    ['combining-marks', 'cafe\u0301 a\u0301\u0302 \u0301lone \u0915\u093f\u0924\u093e\u092c \u20dd!'],
    ['cjk-mixed', '\u6771\u4eac2024\u5e74\u3001\u30ab\u30bf\u30ab\u30ca\uff01\ud55c\uad6d\uc5b4?'],
    ['other-digits', '\u0661\u0662\u0663 \u0967\u0968\u0969 \uff11\uff12 \u00b2\u00bd \u2160\u2161 \u{1D7CE}'],
    ['underscores', 'snake_case __init__ _ a\u203fb \uff3fwide -_-'],
    ['join-controls', '\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 a\u200db \u200c \u{1F469}\u200d\u{1F4BB}'],
    ['emoji', '\u{1F600}\u{1F600} hi\u{1F44B}\u{1F3FD} \u2764\ufe0f ok\u2705'],
    ['punctuation-runs', 'wait...what?!? (a+b)*c == "x" -- \u00ab\u00bb \u2014\u2026 #@$%'],
    ['spaces', '\u00a0a\u3000b\u2028c\u0085d\u200be\ufeff f\t\n'],
  ].map(([name, text]) => ({ name: `whitespace-pre/${name}`, kind: 'whitespace-pre', text }));
}
