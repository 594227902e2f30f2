// Patching's results: a layer × position grid for each of resid_pre, attn_out and mlp_out and a
// layer × head grid for the heads (value-grid.mjs), empty when a run starts and filled a layer at a
// time as the run reports them (model.patch's onProgress), then from its result.
import { clear, el } from './dom.mjs';
import { spokenText, visibleText } from './token-text.mjs';
import { ValueGrid } from './value-grid.mjs';

// The API's sites, the result's keys and the CLI's (the JSON a person copies is the CLI's).
export const SITES = [
  { site: 'resid_pre', key: 'residPre', what: 'the residual stream entering the layer, at one position' },
  { site: 'attn_out', key: 'attnOut', what: "the layer's attention output, at one position" },
  { site: 'mlp_out', key: 'mlpOut', what: "the layer's MLP output, at one position" },
  { site: 'head', key: 'head', what: "one head's output (its z, before the output projection), at every position" },
];

export class PatchingView {
  #root;
  #grids = new Map(); // site -> ValueGrid

  constructor(root) {
    this.#root = root;
  }

  clear() {
    this.#grids.clear();
    clear(this.#root);
  }

  // Empty grids for a run: layers, heads, and the clean and corrupted prompts' token texts (the
  // columns name both where they differ).
  start({ layers, heads, clean, corrupted }) {
    this.clear();
    const rowNames = Array.from({ length: layers }, (_, l) => ({ label: String(l), spoken: `layer ${l}` }));
    const positions = clean.map((t, i) => {
      const differs = corrupted[i] !== t;
      const label = differs ? `${visibleText(t)} / ${visibleText(corrupted[i])}` : visibleText(t);
      return {
        label,
        spoken: `position ${i} ${spokenText(t)}${differs ? ` (corrupted: ${spokenText(corrupted[i])})` : ''}`,
      };
    });
    const headNames = Array.from({ length: heads }, (_, h) => ({ label: String(h), spoken: `head ${h}` }));
    for (const { site, what } of SITES) {
      const grid = new ValueGrid({
        name: site,
        caption: `— ${what}.`,
        rowNames,
        colNames: site === 'head' ? headNames : positions,
        rotate: site !== 'head',
      });
      this.#grids.set(site, grid);
      this.#root.append(grid.element);
    }
    this.#root.append(legend());
  }

  // One layer of one site (onProgress).
  setRow(site, layer, row) {
    this.#grids.get(site)?.setRow(layer, row);
  }

  // The whole result (every row, whatever the progress reports drew).
  finish(result) {
    for (const { site, key } of SITES) if (result[key]) this.#grids.get(site)?.setAll(result[key]);
  }
}

// The colour scale's key (read as text too).
function legend() {
  return el(
    'p',
    { className: 'vg-legend small' },
    el('span', {}, '−1'),
    el('span', { className: 'vg-legend-bar', attrs: { 'aria-hidden': 'true' } }),
    el('span', {}, '1'),
    el(
      'span',
      { className: 'muted' },
      ' blue: the clean answer back (1) · white: as corrupted (0) · red: further from it',
    ),
  );
}
