// The media thread on real sockets: agent frames cross to it and leave as paced RTP, caller RTP comes
// back decoded, digits and the time-out reach the call, its figures come back at close, the pacer's
// delays reach /metrics, and a stalled event loop of the bridge does not stall the RTP.
import { afterAll, afterEach, expect, test } from "bun:test";
import { muLawEncode } from "../../src/audio/g711";
import type { MediaHandlers } from "../../src/media/call-media";
import { startMediaThread } from "../../src/media/media-thread";
import { buildRtp, parseRtp } from "../../src/media/rtp-packet";
import { registry } from "../../src/metrics/metrics";
import { until } from "./helpers/eventually";
import { pcmuCaller } from "../helpers/media-openers";

const base = 46_000 + (process.pid % 500) * 2;
const thread = startMediaThread({
  portMin: base,
  portMax: base + 999,
  hostname: "127.0.0.1",
  leadMs: 60,
  allowCidrs: ["127.0.0.0/8"],
});
afterAll(() => thread.stop());

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function openCall(handlers: Partial<MediaHandlers> = {}, timeoutMs = 10_000) {
  const received: Uint8Array[] = [];
  const caller = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: { data: (_s, data) => void received.push(new Uint8Array(data)), error() {} },
  });
  cleanup.push(() => caller.close());
  const media = await thread.open(
    { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {}, ...handlers },
    { timeoutMs, rtcpIntervalMs: 60_000 },
  );
  cleanup.push(() => media.close());
  // settles once the thread has the target: caller packets before that would be dropped (so the SIP
  // answer waits for it too)
  await media.configure(pcmuCaller(caller.port, 101));
  media.start();
  const send = (packet: Parameters<typeof buildRtp>[0], payload: Uint8Array) =>
    caller.send(buildRtp(packet, payload), media.port, "127.0.0.1");
  return { media, received, send };
}

const ramp = (from: number) => Int16Array.from({ length: 160 }, (_, i) => (from + i) * 16);

test("agent frames handed over ahead of time leave as RTP in order, one every 20 ms, mu-law encoded", async () => {
  const { media, received } = await openCall();
  await until("the first (silent) packet", () => received.length > 0);
  const from = received.length;
  for (let f = 0; f < 5; f++) media.playAudio(ramp(f * 160)); // all at once: the thread paces them
  await until("five frames of agent audio", () => received.length >= from + 10);
  const payloads = received.map((d) => parseRtp(d)!.payload);
  const voiced = payloads.findIndex((p) => p.some((b) => b !== 0xff));
  expect(voiced).toBeGreaterThanOrEqual(from);
  for (let f = 0; f < 5; f++) expect([...payloads[voiced + f]!]).toEqual([...muLawEncode(ramp(f * 160))]);
  const sequences = received.map((d) => parseRtp(d)!.sequence);
  expect(sequences.slice(1).every((s, i) => s === ((sequences[i]! + 1) & 0xffff))).toBe(true);
  const stats = await media.close();
  expect(stats.sent).toBeGreaterThanOrEqual(10);
  expect(stats.skipped).toBe(0);
});

test("caller RTP comes back decoded with its mu-law bytes, digits as digits, and its figures at close", async () => {
  const audio: { pcm: Int16Array; ulaw: Uint8Array | undefined }[] = [];
  const digits: string[] = [];
  const { media, send } = await openCall({
    onAudio: (pcm, ulaw) => audio.push({ pcm, ulaw: ulaw?.slice() }),
    onDigit: (d) => digits.push(d),
  });
  const bytes = Uint8Array.from({ length: 160 }, (_, i) => (i * 7) & 0xff);
  for (let seq = 10; seq < 13; seq++)
    send({ payloadType: 0, marker: false, sequence: seq, timestamp: seq * 160, ssrc: 7 }, bytes);
  // RFC 4733 "5": event 5, end bit, three end packets as senders do
  const event = Uint8Array.from([5, 0x80 | 10, 0x03, 0x20]);
  for (let seq = 13; seq < 16; seq++)
    send({ payloadType: 101, marker: false, sequence: seq, timestamp: 2000, ssrc: 7 }, event);
  await until("three frames and a digit", () => audio.length >= 3 && digits.length >= 1);
  expect([...audio[0]!.ulaw!]).toEqual([...bytes]);
  expect(audio[0]!.pcm.length).toBe(160);
  expect(digits).toEqual(["5"]);
  const stats = await media.close();
  expect(stats.received).toBe(6);
  expect(stats.lost).toBe(0);
});

test("a caller whose RTP stops gets the time-out", async () => {
  let timedOut = false;
  const { send } = await openCall({ onTimeout: () => (timedOut = true) }, 300);
  send({ payloadType: 0, marker: true, sequence: 1, timestamp: 0, ssrc: 9 }, new Uint8Array(160));
  await until("the time-out", () => timedOut, 3_000);
});

test("the media thread's pacer delays are in the bridge's metrics, as thread media", async () => {
  const { received } = await openCall();
  await until("half a second of RTP", () => received.length >= 25);
  await Bun.sleep(600); // the thread reports every half second
  const text = await registry.getSingleMetricAsString("vas_media_pacing_delay_seconds");
  const count = text.match(/^vas_media_pacing_delay_seconds_count\{thread="media"\} (\d+)$/m);
  expect(Number(count?.[1] ?? 0)).toBeGreaterThan(100);
});

test("RTP keeps its pace while this event loop is blocked", async () => {
  const { media, received } = await openCall();
  await until("the first packet", () => received.length > 0);
  // the receiver runs on a thread of its own: this event loop cannot take the arrival times
  const receiver = new Worker(new URL("./fixtures/rtp-arrivals-worker.ts", import.meta.url));
  cleanup.push(() => receiver.terminate());
  const port = await new Promise<number>((resolve) => {
    receiver.onmessage = ({ data }) => resolve(data.port);
  });
  await media.configure(pcmuCaller(port));
  await Bun.sleep(200);
  for (let f = 0; f < 3; f++) media.playAudio(ramp(f));
  const blockedUntil = performance.now() + 300;
  while (performance.now() < blockedUntil) {} // a stalled event loop: 15 packets' time
  await Bun.sleep(200);
  const gaps = await new Promise<number[]>((resolve) => {
    receiver.onmessage = ({ data }) => resolve(data.gaps);
    receiver.postMessage("gaps");
  });
  expect(gaps.length).toBeGreaterThan(25);
  // in the event loop itself the stall would be one gap of 300 ms
  expect(Math.max(...gaps)).toBeLessThan(150);
});

test("a call the thread cannot give a port is refused with the reason, and the thread serves the next", async () => {
  const full = startMediaThread({
    portMin: base + 1_000,
    portMax: base + 1_001,
    hostname: "127.0.0.1",
    leadMs: 60,
    allowCidrs: ["127.0.0.0/8"],
  });
  cleanup.push(() => full.stop());
  const handlers = { onAudio: () => {}, onDigit: () => {}, onTimeout: () => {} };
  const first = await full.open(handlers, { timeoutMs: 10_000 });
  expect(first.port).toBe(base + 1_000);
  const refused = await full.open(handlers, { timeoutMs: 10_000 }).then(
    () => "opened",
    (error: Error) => error.message,
  );
  expect(refused).toMatch(/no free RTP port/);
  await first.close();
  const again = await full.open(handlers, { timeoutMs: 10_000 });
  expect(again.port).toBe(base + 1_000);
});
