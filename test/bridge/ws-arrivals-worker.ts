// A websocket caller on a thread of its own (ws-thread.test.ts): when each binary frame arrived and
// its first byte, timed by this thread's event loop, not by the test's.
declare const self: Worker;
export {};

const arrivals: { at: number; first: number }[] = [];
self.onmessage = ({ data }: MessageEvent<{ url: string } | "arrivals">) => {
  if (data === "arrivals") return self.postMessage({ arrivals });
  const ws = new WebSocket(data.url);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => self.postMessage({ open: true });
  ws.onmessage = ({ data: frame }) => {
    if (frame instanceof ArrayBuffer) arrivals.push({ at: performance.now(), first: new Uint8Array(frame)[0]! });
  };
};
