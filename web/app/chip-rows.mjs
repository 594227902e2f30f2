// Where each chip of the token list goes: chips flow left to right in rows of one height, wrapping
// at the list's width, as a flex-wrap list would place them. The page computes this itself (each
// chip's width measured once from its text, with a canvas) so that the list can keep only the
// chips in view in the DOM (tokens-view.mjs): a long generation has thousands of tokens, and a DOM
// chip per token made every new token cost layout in proportion to all of them.
import { isPartial, visibleText } from './token-text.mjs';

const GAP = 5; // px between chips, across and down (the list's old 0.3rem gap)

export class ChipRows {
  #measure = null; // {ctx, extra, partialExtra, maxWidth, height}
  #width = 1; // px available for a row
  #widths = []; // width of each chip (px)
  x = []; // left of each chip (px)
  row = []; // row of each chip
  rowStart = []; // index of the first chip of each row
  #end = 0; // right end of the last row (px), gap included

  get length() {
    return this.x.length;
  }

  get rows() {
    return this.rowStart.length;
  }

  // Distance from one row's top to the next's.
  get pitch() {
    return (this.#measure?.height ?? 24) + GAP;
  }

  // Height of all rows (px).
  get height() {
    return this.rows ? this.rows * this.pitch - GAP : 0;
  }

  // Reads the chips' font, padding, border and largest width from two chips of the page's style
  // in the list (the text "M", one plain, one partial); false when the list is not laid out
  // (hidden), so nothing could be measured.
  calibrate(plain, partial) {
    const box = plain.getBoundingClientRect(),
      partialBox = partial.getBoundingClientRect();
    const style = getComputedStyle(plain);
    if (!box.width) return false;
    const ctx = new OffscreenCanvas(1, 1).getContext('2d');
    ctx.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const extra = box.width - ctx.measureText('M').width;
    this.#measure = {
      ctx,
      extra,
      partialExtra: partialBox.width - box.width,
      height: box.height,
      maxWidth: parseFloat(style.maxWidth) || Infinity,
    };
    this.#widths = [];
    return true;
  }

  get calibrated() {
    return this.#measure !== null;
  }

  // Lays every chip out again for a row width (the list was resized).
  relayout(texts, width) {
    this.#width = Math.max(1, width);
    this.x = [];
    this.row = [];
    this.rowStart = [];
    this.#end = 0;
    this.append(texts);
  }

  // Places chips after the last one.
  append(texts) {
    for (const text of texts) {
      const i = this.x.length;
      const w = (this.#widths[i] ??= this.#chipWidth(text));
      if (i === 0 || this.#end + w > this.#width) {
        // a new row (a chip wider than a row gets one alone)
        this.rowStart.push(i);
        this.#end = 0;
      }
      this.x.push(this.#end);
      this.row.push(this.rowStart.length - 1);
      this.#end += w + GAP;
    }
  }

  // Keeps the first `length` chips.
  truncate(length) {
    if (length >= this.length) return;
    this.x.length = this.row.length = this.#widths.length = length;
    this.rowStart.length = length ? this.row[length - 1] + 1 : 0;
    this.#end = length ? this.x[length - 1] + this.#widths[length - 1] + GAP : 0;
  }

  // Chips [first, end) of the rows that meet [top, bottom) (px from the list's top), with
  // `overscan` rows more on each side.
  range(top, bottom, overscan) {
    if (!this.rows) return [0, 0];
    const r0 = Math.min(this.rows - 1, Math.max(0, Math.floor(top / this.pitch) - overscan));
    const r1 = Math.min(this.rows - 1, Math.floor(bottom / this.pitch) + overscan);
    if (r0 > r1) return [0, 0];
    return [this.rowStart[r0], r1 + 1 < this.rows ? this.rowStart[r1 + 1] : this.length];
  }

  #chipWidth(text) {
    const m = this.#measure;
    if (!m) return 0;
    const w = m.ctx.measureText(visibleText(text)).width + m.extra + (isPartial(text) ? m.partialExtra : 0);
    return Math.min(m.maxWidth, w); // border-box widths, as the page's CSS has them
  }
}
