// Websocket messages of many connections crossing between the bridge's event loop and its websocket
// thread as one message: the binary ones packed into one buffer that is transferred, not cloned, the
// text ones as strings, in the order they were added. One object per frame (a Uint8Array each, cloned
// on one side and collected on both) was most of what the crossing cost at hundreds of calls.
/**
 * How long either side gathers a batch before posting it: a message costs its receiver a wake-up and an
 * event whatever it holds, and one every 2 ms tick each way cost the calls' event loop more than the
 * sockets it gave away. Agent frames are handed over BRIDGE_MEDIA_LEAD_MS ahead, which covers this
 * (a reply's first frame, which no lead covers, is posted at once: `add`'s `due`); callers' audio goes
 * to the provider in 100 ms appends anyway, except while a caller's turn may be ending: the frame that
 * completes the VAD's wait is posted at once too (the connection is expedited).
 */
export const batchWindowMs = 10;

export type WsBatch = {
  /** item i belongs to connection conns[i]; it is text (the next of `texts`) where kinds[i] is 1 */
  conns: Int32Array;
  kinds: Uint8Array;
  /** binary item i is bytes[ends[i-1]..ends[i]] (a text item adds no bytes) */
  ends: Uint32Array;
  bytes: Uint8Array<ArrayBuffer>;
  texts: string[];
};

export class WsBatchWriter {
  private conns: number[] = [];
  private kinds: number[] = [];
  private ends: number[] = [];
  private texts: string[] = [];
  private bytes = new Uint8Array(64 * 1024);
  private used = 0;

  get size() {
    return this.conns.length;
  }

  /** Binary data is copied now: the caller may reuse its buffer. */
  add(conn: number, data: string | Uint8Array) {
    if (typeof data === "string") this.texts.push(data);
    else {
      if (this.used + data.length > this.bytes.length) {
        const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.used + data.length));
        grown.set(this.bytes.subarray(0, this.used));
        this.bytes = grown;
      }
      this.bytes.set(data, this.used);
      this.used += data.length;
    }
    this.conns.push(conn);
    this.kinds.push(typeof data === "string" ? 1 : 0);
    this.ends.push(this.used);
  }

  /** The batch so far, and the writer empty again; `batch.bytes.buffer` is the batch's own, to transfer. */
  take(): WsBatch {
    const batch = {
      conns: Int32Array.from(this.conns),
      kinds: Uint8Array.from(this.kinds),
      ends: Uint32Array.from(this.ends),
      bytes: this.bytes.slice(0, this.used),
      texts: this.texts,
    };
    this.conns = [];
    this.kinds = [];
    this.ends = [];
    this.texts = [];
    this.used = 0;
    return batch;
  }
}

/** Items gathered for a batch window, then posted as one batch (either side of the thread uses one). */
export class WsBatchQueue {
  private readonly writer = new WsBatchWriter();
  private queued = false;
  private dueSoon = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `post` gets each batch; its `bytes.buffer` is the batch's own, to transfer. */
  constructor(
    private readonly post: (batch: WsBatch) => void,
    private readonly windowMs = batchWindowMs,
  ) {}

  /**
   * `due`: the item is wanted now, not at the window's end (an agent frame that no lead covers, a
   * caller's frame that may end their turn): the batch is posted at the end of this turn of the event
   * loop, with what is added until then.
   */
  add(conn: number, data: string | Uint8Array, due = false) {
    this.writer.add(conn, data);
    if (due && !this.dueSoon) {
      this.dueSoon = true;
      queueMicrotask(this.flush);
    }
    if (this.queued) return;
    this.queued = true;
    this.timer = setTimeout(this.flush, this.windowMs);
  }

  /** Posts what is gathered now, before the window ends (what follows must come after it). */
  readonly flush = () => {
    this.queued = false;
    this.dueSoon = false;
    clearTimeout(this.timer);
    if (this.writer.size > 0) this.post(this.writer.take());
  };
}

/** Each item of a batch in order; binary items are views into the batch's buffer. */
export function forEachInBatch(batch: WsBatch, fn: (conn: number, data: string | Uint8Array) => void) {
  const { conns, kinds, ends, bytes, texts } = batch;
  let text = 0;
  for (let i = 0; i < conns.length; i++)
    fn(conns[i]!, kinds[i] === 1 ? texts[text++]! : bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i]));
}
