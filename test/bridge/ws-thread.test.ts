// The websocket thread on real sockets: requests answered by this event loop, upgrades, caller
// messages back, agent frames paced one per 20 ms per connection, dropped on a barge-in, the rest sent
// before a close; the frames keep their pace while this event loop is blocked for 300 ms; and the
// thread runs at a higher priority than this event loop where the process may raise it; a connection
// whose caller may be ending a turn has its messages posted at once, not at the batch window's end.
import { afterAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import type { WireSocket } from "../../src/bridge/wire-socket";
import { batchWindowMs } from "../../src/bridge/ws-batch";
import { startWsThread } from "../../src/bridge/ws-thread";
import { PRIORITY_STEP } from "../../src/lib/thread-priority";
import { until } from "../sip/helpers/eventually";

type Data = { name: string };
const opened: { data: Data; socket: WireSocket }[] = [];
const received: { name: string; message: string | Buffer }[] = [];
const closed: string[] = [];

const thread = await startWsThread<Data>(
  { port: 0, hostname: "127.0.0.1", reusePort: false, idleTimeout: 60, leadMs: 60 },
  {
    fetch(req, server) {
      const url = new URL(req.url);
      if (url.pathname === "/v1/calls" && server.upgrade(req, { data: { name: url.searchParams.get("name")! } }))
        return undefined;
      return Response.json(
        { error: { message: "not here" } },
        { status: 404, headers: { "x-peer": String(server.requestIP(req)?.address) } },
      );
    },
    open: (data, socket) => void opened.push({ data, socket }),
    message: (data, message) => void received.push({ name: data.name, message }),
    close: (data) => void closed.push(data.name),
  },
);
afterAll(() => thread.stop());

const url = (name: string) => `ws://127.0.0.1:${thread.port}/v1/calls?name=${name}`;
const frame = (index: number) => new Uint8Array(640).fill(index);

async function connect(name: string) {
  const ws = new WebSocket(url(name));
  ws.binaryType = "arraybuffer";
  const frames: { at: number; first: number }[] = [];
  const texts: string[] = [];
  ws.onmessage = ({ data }) => {
    if (data instanceof ArrayBuffer) frames.push({ at: performance.now(), first: new Uint8Array(data)[0]! });
    else texts.push(data);
  };
  const closedWith = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = ({ code, reason }) => resolve({ code, reason });
  });
  await until(`${name} open`, () => opened.some((o) => o.data.name === name));
  return { ws, frames, texts, closedWith, socket: opened.find((o) => o.data.name === name)!.socket };
}

test("a request this event loop answers comes back as it was answered, with the peer's address", async () => {
  const res = await fetch(`http://127.0.0.1:${thread.port}/elsewhere`);
  expect(res.status).toBe(404);
  expect(res.headers.get("x-peer")).toBe("127.0.0.1");
  expect(await res.json()).toEqual({ error: { message: "not here" } });
});

test("caller messages come back; frames leave paced, a barge-in drops the rest, a close sends what is left first", async () => {
  const caller = await connect("a");
  caller.ws.send("hello");
  caller.ws.send(new Uint8Array([1, 2, 3]));
  await until("the caller's messages", () => received.filter((r) => r.name === "a").length === 2);
  const [text, binary] = received.filter((r) => r.name === "a");
  expect(text!.message).toBe("hello");
  expect([...(binary!.message as Buffer)]).toEqual([1, 2, 3]);

  for (let i = 0; i < 10; i++) caller.socket.sendFrame(frame(i));
  caller.socket.sendText('{"type":"transcript"}'); // not paced: it goes out at once
  await until("three frames", () => caller.frames.length >= 3);
  expect(caller.texts).toEqual(['{"type":"transcript"}']);
  caller.socket.clearFrames();
  await Bun.sleep(100);
  const heard = caller.frames.length;
  expect(heard).toBeLessThan(10); // the rest was dropped
  expect(caller.frames.map((f) => f.first)).toEqual([...Array(heard).keys()]);

  for (let i = 20; i < 25; i++) caller.socket.sendFrame(frame(i));
  caller.socket.close(1000, "call ended");
  expect(await caller.closedWith).toEqual({ code: 1000, reason: "call ended" });
  expect(caller.frames.slice(heard).map((f) => f.first)).toEqual([20, 21, 22, 23, 24]);
  await until("the close reported", () => closed.includes("a"));
});

test("a pause holds the frames not sent yet, a resume sends them on in order; a clear while paused drops them", async () => {
  const caller = await connect("p");
  for (let i = 0; i < 10; i++) caller.socket.sendFrame(frame(i));
  await until("two frames", () => caller.frames.length >= 2);
  caller.socket.pauseFrames();
  caller.socket.sendText('{"type":"transcript"}'); // after the pause has reached the thread
  await until("the text", () => caller.texts.length === 1);
  const held = caller.frames.length;
  await Bun.sleep(200);
  expect(caller.frames.length).toBe(held); // nothing sent while paused
  caller.socket.resumeFrames();
  await until("the rest", () => caller.frames.length === 10);
  expect(caller.frames.map((f) => f.first)).toEqual([...Array(10).keys()]);

  for (let i = 10; i < 20; i++) caller.socket.sendFrame(frame(i));
  caller.socket.pauseFrames();
  caller.socket.clearFrames(); // a barge-in after a pause
  for (let i = 30; i < 33; i++) caller.socket.sendFrame(frame(i)); // the next reply plays
  await until("the next reply", () => caller.frames.at(-1)?.first === 32);
  expect(
    caller.frames
      .slice(10)
      .map((f) => f.first)
      .filter((f) => f >= 30),
  ).toEqual([30, 31, 32]);
  caller.ws.close();
});

test("frames keep their 20 ms pace while this event loop is blocked for 300 ms", async () => {
  const receiver = new Worker(new URL("./ws-arrivals-worker.ts", import.meta.url));
  try {
    receiver.postMessage({ url: url("b") });
    await until("b open", () => opened.some((o) => o.data.name === "b"));
    const socket = opened.find((o) => o.data.name === "b")!.socket;
    for (let i = 0; i < 25; i++) socket.sendFrame(frame(i)); // half a second of speech, handed over at once
    await Bun.sleep(batchWindowMs + 5); // (handed-over frames are posted to the thread once a batch window is over)
    const blockedUntil = performance.now() + 300;
    while (performance.now() < blockedUntil) {} // a stalled event loop: 15 frames' time
    await Bun.sleep(400);
    const arrivals = await new Promise<{ at: number; first: number }[]>((resolve) => {
      receiver.onmessage = ({ data }) => data.arrivals && resolve(data.arrivals);
      receiver.postMessage("arrivals");
    });
    expect(arrivals.map((a) => a.first)).toEqual([...Array(25).keys()]);
    const gaps = arrivals.slice(1).map((a, i) => a.at - arrivals[i]!.at);
    // paced, not a burst: 24 gaps of 20 ms; paced in the event loop itself, the stall would be one gap of 300 ms
    expect(arrivals.at(-1)!.at - arrivals[0]!.at).toBeGreaterThan(400);
    expect(Math.max(...gaps)).toBeLessThan(150);
    // one frame a tick, not two every 40 ms
    const median = gaps.toSorted((a, b) => a - b)[gaps.length >> 1]!;
    expect(median).toBeGreaterThan(12);
    expect(median).toBeLessThan(28);
  } finally {
    receiver.terminate();
  }
});

/** Whether this process may lower a nice value to `nice`: CAP_SYS_NICE (bit 23), or RLIMIT_NICE (20 - nice). */
function mayRaisePriorityTo(nice: number): boolean {
  const status = readFileSync("/proc/self/status", "utf8");
  const capabilities = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(status)![1]}`);
  const rlimit = /Max nice priority\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"));
  return (capabilities & (1n << 23n)) !== 0n || (rlimit !== null && 20 - Number(rlimit[1]) <= nice);
}

const niceOf = (tid: number | string) => {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
};

test("the thread runs 10 nice levels above the event loop where the process may raise it, else at its level", () => {
  const threads = readdirSync("/proc/self/task").filter(
    (tid) => readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === "vas-ws",
  );
  // relative to the process's own nice value: CI may start the suite under `nice`
  const base = niceOf(process.pid);
  const raised = Math.max(-20, base - PRIORITY_STEP);
  expect(threads.map(niceOf)).toEqual([mayRaisePriorityTo(raised) ? raised : base]);
});

test("an expedited connection's messages are posted at once, with what was gathered before them; others wait for the window", async () => {
  // a window of 3 s: a batched message cannot pass for an expedited one (last in the file: its thread
  // is not the one the priority test above looks for)
  const names: string[] = [];
  const slow = await startWsThread<Data>(
    { port: 0, hostname: "127.0.0.1", reusePort: false, idleTimeout: 60, leadMs: 60, receiveWindowMs: 3000 },
    {
      fetch: (req, server) => (server.upgrade(req, { data: { name: "s" } }) ? undefined : new Response(null)),
      open: (data, socket) => void opened.push({ data, socket }),
      message: (_data, message) => void names.push(String(message)),
      close: () => {},
    },
  );
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${slow.port}/`);
    const texts: string[] = [];
    ws.onmessage = ({ data }) => void texts.push(String(data));
    await until("s open", () => opened.some((o) => o.data.name === "s"));
    const socket = opened.find((o) => o.data.name === "s")!.socket;
    const mark = async (text: string) => {
      socket.sendText(text); // after what was posted to the thread before it
      await until(text, () => texts.includes(text));
    };
    ws.send("gathered");
    await Bun.sleep(300);
    expect(names).toEqual([]); // in the window
    socket.expediteReceived!(true);
    await mark("expedited");
    ws.send("urgent");
    await until("the urgent message", () => names.length === 2, 1500);
    expect(names).toEqual(["gathered", "urgent"]);
    socket.expediteReceived!(false);
    await mark("batched");
    ws.send("later");
    await Bun.sleep(300);
    expect(names).toEqual(["gathered", "urgent"]);
    await until("the window's end", () => names.length === 3, 5000);
    ws.close();
  } finally {
    await slow.stop();
  }
});
