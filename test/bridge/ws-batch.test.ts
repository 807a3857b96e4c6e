// A batch of websocket messages as it crosses between the bridge's event loop and its websocket thread:
// every item comes out for its connection, in the order added, text as text and binary as the bytes
// added then (the writer copies them), after a real postMessage with the buffer transferred.
import { expect, test } from "bun:test";
import { FramesHeld } from "../../src/bridge/frames-held";
import { batchWindowMs, forEachInBatch, WsBatchQueue, WsBatchWriter, type WsBatch } from "../../src/bridge/ws-batch";

const unpack = (batch: WsBatch) => {
  const items: [number, string | number[]][] = [];
  forEachInBatch(batch, (conn, data) => items.push([conn, typeof data === "string" ? data : [...data]]));
  return items;
};

const crossed = (batch: WsBatch) =>
  new Promise<WsBatch>((resolve) => {
    const channel = new MessageChannel();
    channel.port2.addEventListener("message", (event) => {
      channel.port1.close();
      channel.port2.close();
      resolve((event as MessageEvent<WsBatch>).data);
    });
    channel.port2.start();
    channel.port1.postMessage(batch, [batch.bytes.buffer]);
  });

test("text and binary items of several connections keep their order and bytes across threads", async () => {
  const writer = new WsBatchWriter();
  const reused = new Uint8Array([1, 2, 3]);
  writer.add(7, '{"type":"start"}');
  writer.add(7, reused);
  reused.fill(9); // the caller's buffer is reused at once: the batch holds what was added
  writer.add(8, new Uint8Array([4, 5]));
  writer.add(7, '{"type":"hangup"}');
  writer.add(8, new Uint8Array([6]));
  expect(writer.size).toBe(5);
  const batch = await crossed(writer.take());
  expect(unpack(batch)).toEqual([
    [7, '{"type":"start"}'],
    [7, [1, 2, 3]],
    [8, [4, 5]],
    [7, '{"type":"hangup"}'],
    [8, [6]],
  ]);
  expect(writer.size).toBe(0);
});

test("a batch larger than the writer's buffer grows it, and the next batch starts empty", () => {
  const writer = new WsBatchWriter();
  const frames = Array.from({ length: 300 }, (_, i) => new Uint8Array(640).fill(i & 0xff));
  for (const [i, frame] of frames.entries()) writer.add(i, frame); // 192 KB, three times the first buffer
  const items = unpack(writer.take());
  expect(items.length).toBe(300);
  items.forEach(([conn, bytes], i) => {
    expect(conn).toBe(i);
    expect(bytes).toEqual([...frames[i]!]);
  });
  writer.add(1, new Uint8Array([42]));
  expect(unpack(writer.take())).toEqual([[1, [42]]]);
});

test("a due item (a reply's first frame) is posted at the end of this turn of the event loop, with what follows it in that turn; others wait for the window", async () => {
  const posted: [number, string | number[]][][] = [];
  const queue = new WsBatchQueue((batch) => posted.push(unpack(batch)));
  queue.add(1, new Uint8Array([1])); // a frame the lead covers: it waits for the window
  await null;
  expect(posted).toEqual([]);
  queue.add(2, new Uint8Array([2]), true); // due now
  queue.add(2, new Uint8Array([3])); // the rest of the reply's lead, handed over in the same tick
  expect(posted).toEqual([]);
  await null;
  expect(posted).toEqual([
    [
      [1, [1]],
      [2, [2]],
      [2, [3]],
    ],
  ]);
  // the window's timer went with that batch: the next item starts a window of its own
  queue.add(1, new Uint8Array([4]));
  await Bun.sleep(batchWindowMs * 3);
  expect(posted.length).toBe(2);
  expect(posted[1]).toEqual([[1, [4]]]);
});

test("a frame is due at once when the thread holds none of the connection's: a reply's first, or the first after a barge-in", () => {
  const held = new FramesHeld();
  expect(held.handOver(1000)).toBe(true); // the reply's first frame
  // the rest of a 200 ms lead in the same tick, then one a frame later: the thread holds them
  for (let i = 0; i < 9; i++) expect(held.handOver(1000)).toBe(false);
  expect(held.handOver(1020)).toBe(false);
  // the eleven have played by 1220: the next reply's first is due at once
  expect(held.handOver(1219)).toBe(false);
  expect(held.handOver(1500)).toBe(true);
  held.cleared(); // a barge-in dropped what the thread held
  expect(held.handOver(1501)).toBe(true);
});
