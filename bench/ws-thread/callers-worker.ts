// The callers of bench/ws-thread on a thread of their own: N websockets, the gap between consecutive
// agent frames of each (|gap - 20 ms|), timed by this thread's event loop, not the bench's.
declare const self: Worker;
export {};

let jitters: number[] = [];
let frames = 0;
self.onmessage = async ({ data }: MessageEvent<{ url: string; calls: number } | "report">) => {
  if (data === "report") {
    self.postMessage({ jitters, frames });
    jitters = [];
    frames = 0;
    return;
  }
  const opened: Promise<void>[] = [];
  for (let i = 0; i < data.calls; i++) {
    const ws = new WebSocket(data.url);
    ws.binaryType = "arraybuffer";
    let last = 0;
    ws.onmessage = () => {
      const now = performance.now();
      if (last > 0) jitters.push(Math.abs(now - last - 20));
      last = now;
      frames++;
    };
    opened.push(new Promise((resolve) => (ws.onopen = () => resolve())));
  }
  await Promise.all(opened);
  self.postMessage({ open: true });
};
