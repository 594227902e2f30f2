// When the page draws what streamed in: at most once per animation frame, and no more often than
// keeps drawing to a share of the main thread. On a machine whose cores the engine keeps busy,
// every millisecond the page spends drawing is one the engine does not get, and the browser's work
// per frame (style, layout, paint, compositing: several milliseconds whatever was appended) is paid
// per frame, not per token: fewer, fuller frames show the same tokens for less.
//
// A frame's cost is measured from the moment the draw starts changing the page (its `begin()`;
// what it awaited before, such as token texts from the engine's worker, is not the page's work) to
// a task queued when the draw is done: when the draw did not wait, that task runs once the browser
// has also styled, laid out and painted the frame, so its cost is in. The next frame then waits
// cost / share, at most maxWait.
//
//   const pacer = new FramePacer(async (begin) => { ...await what it needs; begin(); append... },
//                                { onError: (e) => ... });
//   pacer.request();        // something arrived
//   await pacer.flush();    // draw what is left now (the end of a generation); throws a draw's error
export class FramePacer {
  #draw;
  #share;
  #maxWait;
  #onError;
  #frame = 0;
  #timer = 0;
  #earliest = 0; // performance.now() before which the next frame does not draw
  #wanted = false; // something arrived that no frame has drawn yet
  #busy = false; // a frame is being drawn (its cost is not known yet)
  #error = null; // a draw failed: nothing more is drawn
  #drawing = Promise.resolve();

  // draw(begin): an async function appending everything that arrived, calling begin() when it
  // starts changing the page; share: of the main thread's time (0-1); maxWait: the longest pause
  // between frames (ms), however costly they are; onError(error): a draw failed (at once, not at
  // the next flush).
  constructor(draw, { share = 0.25, maxWait = 100, onError = () => {} } = {}) {
    this.#draw = draw;
    this.#share = share;
    this.#maxWait = maxWait;
    this.#onError = onError;
  }

  // Asks for a frame (several requests before it draws are one frame).
  request() {
    this.#wanted = true;
    if (this.#frame || this.#timer || this.#busy || this.#error) return;
    const wait = this.#earliest - performance.now();
    if (wait <= 0) return this.#schedule();
    this.#timer = setTimeout(() => {
      this.#timer = 0;
      this.#schedule();
    }, wait);
  }

  // Draws now whatever a requested frame would have drawn; resolves when it is drawn, or rejects
  // with the error of a draw that failed.
  async flush() {
    this.cancel();
    await this.#run(() => {});
    if (this.#error) throw this.#error;
  }

  // Resolves once the frame being drawn (if any) is drawn, whether or not it failed.
  settled() {
    return this.#drawing;
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
      let start = performance.now();
      this.#run(() => {
        start = performance.now();
      }).then(() =>
        afterFrame(() => {
          this.#busy = false;
          this.#earliest = start + Math.min(this.#maxWait, (performance.now() - start) / this.#share);
          if (this.#wanted) this.request(); // what arrived meanwhile
        }),
      );
    });
  }

  // One draw after the previous one; a failure is kept (and reported) instead of breaking the chain.
  #run(begin) {
    this.#drawing = this.#drawing.then(async () => {
      if (this.#error) return;
      try {
        await this.#draw(begin);
      } catch (e) {
        this.#error = e;
        this.#onError(e);
      }
    });
    return this.#drawing;
  }
}

// Runs f in a task queued now: after the rendering of the current frame when called from an
// animation-frame callback (or a microtask of one).
function afterFrame(f) {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    f();
  };
  channel.port2.postMessage(null);
}
