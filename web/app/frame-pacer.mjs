// When the page draws what streamed in: at most once per animation frame, and no more often than
// keeps drawing to a share of the main thread. A frame's cost is measured from its animation-frame
// callback to a task queued there, which runs once the browser has also styled, laid out and
// painted the frame; the next frame then waits cost / share. On a machine whose cores the engine
// keeps busy, every millisecond the page spends drawing is one the engine does not get, and the
// browser's work per frame (style, layout, paint, compositing: several milliseconds whatever was
// appended) is paid per frame, not per token: fewer, fuller frames show the same tokens for less.
//
//   const pacer = new FramePacer(async () => { ...append what arrived... });
//   pacer.request();   // something arrived
//   await pacer.flush();   // draw what is left now (the end of a generation)
export class FramePacer {
  #draw;
  #share;
  #maxWait;
  #frame = 0;
  #timer = 0;
  #earliest = 0;           // performance.now() before which the next frame does not draw
  #wanted = false;         // something arrived that no frame has drawn yet
  #busy = false;           // a frame is being drawn (its cost is not known yet)
  #drawing = Promise.resolve();

  // draw: an async function appending everything that arrived; share: of the main thread's time
  // (0-1); maxWait: the longest pause between frames (ms), however costly they are.
  constructor(draw, { share = 0.25, maxWait = 100 } = {}) {
    this.#draw = draw;
    this.#share = share;
    this.#maxWait = maxWait;
  }

  // Asks for a frame (several requests before it draws are one frame).
  request() {
    this.#wanted = true;
    if (this.#frame || this.#timer || this.#busy) return;
    const wait = this.#earliest - performance.now();
    if (wait <= 0) return this.#schedule();
    this.#timer = setTimeout(() => {
      this.#timer = 0;
      this.#schedule();
    }, wait);
  }

  // Draws now whatever a requested frame would have drawn; resolves when it is drawn.
  flush() {
    this.cancel();
    this.#drawing = this.#drawing.then(this.#draw);
    return this.#drawing;
  }

  // Resolves once the frame being drawn (if any) is drawn, whether or not it failed.
  settled() {
    return this.#drawing.catch(() => {});
  }

  // No frame is drawn for what was requested so far.
  cancel() {
    cancelAnimationFrame(this.#frame);
    clearTimeout(this.#timer);
    this.#frame = this.#timer = 0;
    this.#wanted = false;
  }

  #schedule() {
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#wanted = false;
      this.#busy = true;
      const start = performance.now();
      this.#drawing = this.#drawing.then(this.#draw).finally(() => afterFrame(() => {
        this.#busy = false;
        this.#earliest = start + Math.min(this.#maxWait, (performance.now() - start) / this.#share);
        if (this.#wanted) this.request();   // what arrived meanwhile
      }));
    });
  }
}

// Runs f in a task queued now: after the rendering of the current frame when called from an
// animation-frame callback.
function afterFrame(f) {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    f();
  };
  channel.port2.postMessage(null);
}
