// mu-law passthrough: a PCMU caller's RTP payloads reach an OpenAI Realtime provider that takes
// g711_ulaw byte for byte, through the real parts of the media path (the RTP session on a real UDP
// socket, the call session, the realtime adapter, the provider's websocket). A decode and re-encode
// would change some bytes: mu-law has two zeros (0x7f and 0xff) and the encoder writes only one.
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CallSession } from "../../src/calls/call-session";
import type { CallerTransport } from "../../src/calls/caller-transport";
import { loadConfig } from "../../src/config";
import { buildRtp } from "../../src/media/rtp-packet";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import { createVoiceSession } from "../../src/voice/create-voice-session";
import { startFakeRealtimeServer } from "../fakes/openai-realtime-server";
import { mediaOpeners, pcmuCaller } from "../helpers/media-openers";
import { until } from "./helpers/eventually";

const openers = mediaOpeners(44_000);
afterAll(() => Promise.all(openers.map((o) => o.stop())));

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

test.each(openers)(
  "the provider receives the PCMU caller's bytes unchanged, both mu-law zeros included, with the RTP $where",
  async ({ open }) => {
    // the provider hears no speech in them (no barge-in): only the bytes matter here
    const fake = await startFakeRealtimeServer({ keepInputAudio: true, speechThreshold: 40_000 });
    cleanup.push(() => fake.close());
    const config = loadConfig({ OPENAI_REALTIME_URL: fake.url, OPENAI_API_KEY: "sk-test-key" });
    const voice = await createVoiceSession(
      { type: "openai_realtime", parameters: {} },
      { instructions: "Listen.", greeting: null, tools: [], sampleRate: 8000, config },
    );
    const provider = await fake.nextSession();

    const caller = await Bun.udpSocket({ hostname: "127.0.0.1", socket: { data() {}, error() {} } });
    cleanup.push(() => caller.close());
    let call: CallSession | null = null;
    const media = await open(
      { onAudio: (pcm, ulaw) => call?.callerAudio(pcm, ulaw), onDigit: () => {}, onTimeout: () => {} },
      { timeoutMs: 10_000 },
    );
    cleanup.push(() => media.close());
    const transport: CallerTransport = {
      descriptor: { type: "websocket" },
      sampleRate: 8000,
      playAudio: (frame) => media.playAudio(frame),
      clearAudio: () => media.clearAudio(),
      pauseAudio: () => media.pauseAudio(),
      resumeAudio: () => media.resumeAudio(),
      notify: () => {},
      hangup: () => {},
    };
    const recordings = mkdtempSync(join(tmpdir(), "ulaw-passthrough-"));
    cleanup.push(() => rmSync(recordings, { recursive: true, force: true }));
    call = new CallSession({
      callId: crypto.randomUUID(),
      transport,
      tools: [],
      toolTimeoutMs: 1_000,
      toolGuard: createOutboundGuard({ allowCidrs: [] }),
      maxCallMs: 60_000,
      recording: { dir: recordings, format: "ulaw", maxBytes: 1 << 20 },
    });
    cleanup.push(async () => {
      call?.end("caller-hangup");
      await call?.ended;
    });
    call.attachVoice(voice);
    await media.configure(pcmuCaller(caller.port));
    media.start();

    // every mu-law code word, 0x7f among them, in 20 ms frames: two of the provider's 100 ms appends
    const sent = Uint8Array.from({ length: 10 * 160 }, (_, i) => (i * 37) & 0xff);
    for (let f = 0; f < 10; f++) {
      const packet = { payloadType: 0, marker: f === 0, sequence: 500 + f, timestamp: f * 160, ssrc: 0x5eed };
      caller.send(buildRtp(packet, sent.subarray(f * 160, (f + 1) * 160)), media.port, "127.0.0.1");
    }
    const received = await until("the caller's audio at the provider", () => {
      const bytes = Buffer.concat(provider.inputAudio);
      return bytes.length >= sent.length && bytes;
    });
    expect(provider.session.input_audio_format).toBe("g711_ulaw");
    expect([...received]).toEqual([...sent]);
  },
);
