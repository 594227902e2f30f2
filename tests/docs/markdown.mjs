// What the docs tests read from a Markdown file: the anchors its headings get and the links it
// makes, as GitHub renders them. Code (fenced blocks and `inline` spans) is skipped: a link
// written inside code is an example, not a link.

// Lines outside fenced code blocks, with their 1-based numbers.
function proseLines(text) {
  const out = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (open) {
      if (fence === null) fence = open[1][0];
      else if (open[1][0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line, number: i + 1 });
  });
  return out;
}

// The anchor GitHub gives a heading (github-slugger): the rendered text in lower case, every
// character but letters, digits, marks, '_', '-' and spaces dropped, spaces made '-'.
export function slug(heading) {
  const rendered = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

// Every anchor of the file's headings; a repeated heading gets -1, -2, ... as on GitHub.
export function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const { line } of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

// Every inline link and image of the file outside code: [{target, line}], the target without a
// title ("...").
export function links(text) {
  const out = [];
  for (const { line, number } of proseLines(text)) {
    const prose = line.replace(/(`+)[^`]*?\1/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g))
      out.push({ target: m[1], line: number });
  }
  return out;
}
