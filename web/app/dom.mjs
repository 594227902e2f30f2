// DOM building without HTML strings: everything a model produces goes in as text nodes.

// el('li', {className: 'chip', dataset: {id: 3}, attrs: {'aria-label': 'x'}}, 'text', childNode)
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'attrs') for (const [a, v] of Object.entries(value)) node.setAttribute(a, String(v));
    else if (key === 'on') for (const [type, f] of Object.entries(value)) node.addEventListener(type, f);
    else node[key] = value;
  }
  append(node, ...children);
  return node;
}

export function append(node, ...children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function formatBytes(n) {
  if (!Number.isFinite(n)) return '?';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024,
    i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    ++i;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

export function formatInt(n) {
  return Number(n).toLocaleString('en-US');
}

// Tints an element by an attention weight (CSS --weight, square root so that small weights show),
// or removes the tint for 0.
export function tint(node, weight) {
  if (weight > 0) {
    node.style.setProperty('--weight', Math.sqrt(weight).toFixed(3));
    node.classList.add('weighted');
  } else {
    node.style.removeProperty('--weight');
    node.classList.remove('weighted');
  }
}
