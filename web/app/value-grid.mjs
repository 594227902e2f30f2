// A grid of signed values as a table (the Experiments region's patching and attribution results):
// rows are layers, columns positions or heads. Each cell is coloured by its value (blue above 0,
// red below, white at 0) or holds a signed bar; its value shows under the pointer and under the
// keyboard cursor (arrow keys, Home/End move it: one cell is in the tab order, as in ARIA's grid
// pattern) in a readout, and each cell's accessible name says its row, column and value.
// Rows can be filled one at a time (a patching run's layers as they come).
import { el } from './dom.mjs';

const BLUE = [33, 102, 172]; // ColorBrewer RdBu's ends
const RED = [178, 24, 43];

// The colour of a value on a scale where ±scale is full strength, as [r, g, b].
function divergingRgb(value, scale) {
  if (!Number.isFinite(value)) return [214, 219, 226];
  const t = Math.min(1, Math.abs(value) / (scale || 1)),
    end = value < 0 ? RED : BLUE;
  return end.map((c) => Math.round(255 + t * (c - 255)));
}

export function divergingColor(value, scale = 1) {
  const [r, g, b] = divergingRgb(value, scale);
  return `rgb(${r} ${g} ${b})`;
}

// Whether text on that colour reads better in white than in the page's near-black (#17202c): the
// one of the two with the larger WCAG contrast ratio.
export function darkBackground(value, scale = 1) {
  const luminance = (rgb) =>
    rgb
      .map((c) => c / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
      .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const L = luminance(divergingRgb(value, scale));
  return 1.05 / (L + 0.05) > (L + 0.05) / (luminance([23, 32, 44]) + 0.05);
}

// A number for people: 4 significant digits at most, − for minus.
export function formatValue(v) {
  if (!Number.isFinite(v)) return String(v);
  const s = Math.abs(v) >= 100 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(3) : v.toFixed(4);
  return s.replace('-', '−');
}

export class ValueGrid {
  element; // the figure: caption, table, readout
  #table;
  #readout;
  #cells = []; // [row][col] -> td
  #values = []; // [row][col] -> number or undefined (not computed yet)
  #rowNames;
  #colNames;
  #mode;
  #scale;
  #name;
  #cursor = { r: 0, c: 0 };
  #hint;

  // name: what the grid shows ("resid_pre", the table's accessible name); caption: a line under it;
  // rowNames/colNames: labels (strings or nodes) and their spoken forms ({label, spoken});
  // mode 'heat' (colour) or 'bar' (a signed bar per cell); scale: the value drawn at full strength.
  constructor({ name, caption, rowNames, colNames, mode = 'heat', scale = 1, corner = 'Layer', rotate = false }) {
    this.#name = name;
    this.#rowNames = rowNames;
    this.#colNames = colNames;
    this.#mode = mode;
    this.#scale = scale;
    this.#hint = `Point at a cell, or focus the grid and use the arrow keys.`;
    const head = el(
      'tr',
      {},
      el('th', { scope: 'col', className: 'vg-corner' }, corner),
      ...colNames.map((c) =>
        el(
          'th',
          { scope: 'col', className: rotate ? 'vg-col rotated' : 'vg-col', attrs: { 'aria-label': c.spoken } },
          el('span', {}, c.label),
        ),
      ),
    );
    const rows = rowNames.map((r, i) => {
      this.#cells.push([]);
      this.#values.push([]);
      return el(
        'tr',
        {},
        el('th', { scope: 'row', className: 'vg-row' }, r.label),
        ...colNames.map((c, j) => {
          const td = el('td', {
            className: `vg-cell vg-${mode}`,
            tabIndex: i === 0 && j === 0 ? 0 : -1,
            dataset: { row: i, col: j },
            attrs: { role: 'gridcell', 'aria-label': `${r.spoken}, ${c.spoken}: not computed yet` },
          });
          if (mode === 'bar') td.append(el('span', { className: 'vg-fill' }));
          this.#cells[i].push(td);
          return td;
        }),
      );
    });
    this.#table = el(
      'table',
      { className: `value-grid vg-${mode}`, attrs: { role: 'grid', 'aria-label': name, 'aria-describedby': '' } },
      el('thead', {}, head),
      el('tbody', {}, ...rows),
    );
    this.#readout = el('p', { className: 'readout small vg-readout', attrs: { 'aria-live': 'polite' } }, this.#hint);
    const id = `vg-${name.replace(/\W+/g, '-')}-${Math.random().toString(36).slice(2, 8)}`;
    this.#readout.id = id;
    this.#table.setAttribute('aria-describedby', id);
    this.element = el(
      'figure',
      { className: 'vg-figure' },
      el('figcaption', {}, el('strong', {}, name), caption ? ` ${caption}` : ''),
      el('div', { className: 'vg-scroll' }, this.#table),
      this.#readout,
    );
    this.#table.addEventListener('pointerover', (e) => {
      const td = e.target.closest?.('td.vg-cell');
      if (td) this.#describe(Number(td.dataset.row), Number(td.dataset.col));
    });
    this.#table.addEventListener('pointerleave', () => this.#say(this.#hint));
    this.#table.addEventListener('focusin', (e) => {
      const td = e.target.closest?.('td.vg-cell');
      if (td) this.#describe(Number(td.dataset.row), Number(td.dataset.col));
    });
    this.#table.addEventListener('keydown', (e) => this.#key(e));
  }

  get name() {
    return this.#name;
  }

  // The values of row r (an array-like of numbers, one per column).
  setRow(r, values) {
    for (let c = 0; c < this.#colNames.length; ++c) this.#set(r, c, values[c]);
  }

  // Every row (rows: an array of array-likes).
  setAll(rows) {
    rows.forEach((values, r) => this.setRow(r, values));
  }

  #set(r, c, v) {
    const td = this.#cells[r][c];
    this.#values[r][c] = v;
    td.dataset.value = String(v);
    const text = `${this.#rowNames[r].spoken}, ${this.#colNames[c].spoken}: ${formatValue(v)}`;
    td.setAttribute('aria-label', text);
    td.title = text;
    if (this.#mode === 'heat') {
      td.style.background = divergingColor(v, this.#scale);
      td.classList.toggle('dark', darkBackground(v, this.#scale));
    } else {
      const bar = td.firstChild,
        w = Math.min(50, (50 * Math.abs(v)) / (this.#scale || 1));
      bar.style.width = `${w}%`;
      bar.style.left = v < 0 ? `${50 - w}%` : '50%';
      bar.classList.toggle('negative', v < 0);
    }
    td.classList.add('computed');
  }

  #describe(r, c) {
    const v = this.#values[r]?.[c];
    const where = `${this.#name}: ${this.#rowNames[r].spoken}, ${this.#colNames[c].spoken}`;
    this.#say(v === undefined ? `${where}: not computed yet` : `${where}: ${formatValue(v)}`);
  }

  #say(text) {
    if (this.#readout.textContent !== text) this.#readout.textContent = text;
  }

  #key(e) {
    const td = e.target.closest?.('td.vg-cell');
    if (!td) return;
    let r = Number(td.dataset.row),
      c = Number(td.dataset.col);
    const R = this.#rowNames.length,
      C = this.#colNames.length;
    switch (e.key) {
      case 'ArrowUp':
        r = Math.max(0, r - 1);
        break;
      case 'ArrowDown':
        r = Math.min(R - 1, r + 1);
        break;
      case 'ArrowLeft':
        c = Math.max(0, c - 1);
        break;
      case 'ArrowRight':
        c = Math.min(C - 1, c + 1);
        break;
      case 'Home':
        c = 0;
        break;
      case 'End':
        c = C - 1;
        break;
      default:
        return;
    }
    e.preventDefault();
    const prev = this.#cells[this.#cursor.r][this.#cursor.c];
    prev.tabIndex = -1;
    this.#cursor = { r, c };
    const next = this.#cells[r][c];
    next.tabIndex = 0;
    next.focus();
  }
}
