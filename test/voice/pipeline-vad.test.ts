// Silero VAD v5 on real espeak-ng speech, silence and noise, and the turn-taking settings moving the
// start and end of a turn the way they say.
import { describe, expect, spyOn, test } from "bun:test";
import * as ort from "onnxruntime-node";
import { concatPcm, rms } from "../../src/audio/pcm";
import { SileroVad } from "../../src/voice/pipeline/silero-vad";
import { SpeechDetector, type SpeechEvent } from "../../src/voice/pipeline/speech-detector";
import type { VadSettings } from "../../src/voice/pipeline/turn-detector";
import { silence, speech } from "../helpers/speech";

const base: VadSettings = {
  confidenceThreshold: 0.5,
  minVolume: 0,
  startDurationMs: 64,
  stopDurationMs: 400,
  backbufferDurationMs: 300,
};

/** White noise of `ms` at `rate` with RMS about `level` of full scale (deterministic). */
function noise(ms: number, rate: number, level: number) {
  const out = new Int16Array(Math.round((ms * rate) / 1000));
  let seed = 12345;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * level * 32767 * Math.sqrt(3));
  }
  return out;
}

/**
 * Feeds `audio` in 20 ms frames, each arriving at its end's stream time; returns the events with the
 * stream time (ms) they happened at, and for an end when the last speech was heard.
 */
async function detect(audio: Int16Array, rate: number, settings: Partial<VadSettings> = {}, pauses = false) {
  const events: { type: string; atMs: number; samples: number; lastSpeechAt?: number }[] = [];
  let fedMs = 0;
  const detector = await SpeechDetector.create(
    rate,
    { ...base, ...settings },
    (e: SpeechEvent) => {
      if (e.type === "start") events.push({ type: e.type, atMs: fedMs, samples: e.audio.length });
      if (e.type === "end") events.push({ type: e.type, atMs: fedMs, samples: 0, lastSpeechAt: e.lastSpeechAt });
      if (e.type === "pausing" && pauses) events.push({ type: e.on ? "pausing" : "went on", atMs: fedMs, samples: 0 });
    },
    (error) => {
      throw error;
    },
  );
  const frame = rate / 50;
  for (let i = 0; i < audio.length; i += frame) {
    detector.push(audio.subarray(i, i + frame), fedMs + 20);
    await detector.settled(); // score as we go, so `fedMs` is the time each event happened at
    fedMs += 20;
  }
  detector.stop();
  return events;
}

/** Where the voice is in espeak's output (it pads with quiet), in ms: 10 ms frames above RMS 300. */
function voiced(samples: Int16Array, rate: number) {
  const frame = rate / 100;
  const loud: number[] = [];
  for (let i = 0; i + frame <= samples.length; i += frame)
    if (rms(samples.subarray(i, i + frame)) > 300) loud.push(i / frame);
  return { startMs: (loud[0] ?? 0) * 10, endMs: ((loud.at(-1) ?? 0) + 1) * 10 };
}

async function utterance(rate: number, padMs = 600) {
  const said = await speech("Where is my order forty two?", rate);
  const { startMs, endMs } = voiced(said, rate);
  return {
    audio: concatPcm([silence(padMs, rate), said, silence(1500, rate)]),
    onsetMs: padMs + startMs,
    endMs: padMs + endMs,
  };
}

describe("Silero VAD v5", () => {
  test("speech scores high, silence and noise low, at 8 and 16 kHz", async () => {
    for (const rate of [8000, 16000] as const) {
      const vad = await SileroVad.create(rate);
      const score = async (audio: Int16Array) => {
        const probs: number[] = [];
        for (let i = 0; i + vad.windowSamples <= audio.length; i += vad.windowSamples)
          probs.push(await vad.probability(audio.subarray(i, i + vad.windowSamples)));
        return probs;
      };
      const speechProbs = await score(await speech("Where is my order forty two?", rate));
      expect(speechProbs.filter((p) => p > 0.5).length / speechProbs.length).toBeGreaterThan(0.6);
      expect(Math.max(...(await score(silence(1000, rate))))).toBeLessThan(0.1);
      expect(Math.max(...(await score(noise(1000, rate, 0.05))))).toBeLessThan(0.5);
    }
  });

  test("calls' windows are scored in the VAD thread, together, each call with its own state", async () => {
    // the model never runs on the event loop that paces the calls' audio
    // (typed as a factory, InferenceSession is the sessions' class: its prototype's run is every session's)
    const sessions = ort.InferenceSession as unknown as { prototype: ort.InferenceSession };
    const onLoop = spyOn(sessions.prototype, "run");
    try {
      const rate = 8000;
      const streams = [
        await speech("Where is my order forty two?", rate),
        noise(1500, rate, 0.05),
        concatPcm([silence(300, rate), await speech("Hello there.", rate)]),
      ];
      const windows = (audio: Int16Array) =>
        Array.from({ length: Math.floor(audio.length / 256) }, (_, i) => audio.subarray(i * 256, (i + 1) * 256));
      const alone: number[][] = [];
      for (const audio of streams) {
        const vad = await SileroVad.create(rate);
        const probs: number[] = [];
        for (const window of windows(audio)) probs.push(await vad.probability(window));
        alone.push(probs);
      }
      // the same windows, every stream's next window asked for at once (one batch per step)
      const vads = await Promise.all(streams.map(() => SileroVad.create(rate)));
      const together: number[][] = streams.map(() => []);
      const steps = Math.max(...streams.map((audio) => windows(audio).length));
      for (let step = 0; step < steps; step++)
        await Promise.all(
          streams.map(async (audio, s) => {
            const window = windows(audio)[step];
            if (window) together[s]!.push(await vads[s]!.probability(window));
          }),
        );
      streams.forEach((_, s) => {
        expect(together[s]!.length).toBe(alone[s]!.length);
        for (const [i, p] of together[s]!.entries()) expect(p).toBeCloseTo(alone[s]![i]!, 4);
      });
      expect(alone[0]!.filter((p) => p > 0.5).length).toBeGreaterThan(10); // speech did score high
      expect(onLoop).toHaveBeenCalledTimes(0);
    } finally {
      onLoop.mockRestore();
    }
  });
});

describe("turn-taking", () => {
  test("one turn per utterance, starting near the onset and ending stopDuration after the speech", async () => {
    for (const rate of [8000, 16000, 24000]) {
      const { audio, onsetMs, endMs } = await utterance(rate);
      const events = await detect(audio, rate);
      expect(events.map((e) => e.type)).toEqual(["start", "end"]);
      expect(events[0]!.atMs).toBeGreaterThan(onsetMs);
      expect(events[0]!.atMs).toBeLessThan(onsetMs + 250);
      expect(events[1]!.atMs).toBeGreaterThan(endMs + 400 - 150);
      expect(events[1]!.atMs).toBeLessThan(endMs + 400 + 250);
    }
  });

  test("the end says when the caller's last speech arrived: at the voice's end, stopDuration before the end", async () => {
    for (const rate of [8000, 16000]) {
      const { audio, endMs } = await utterance(rate);
      const [, end] = await detect(audio, rate);
      // as close to the voice's end as the VAD's own end (above), and never later than stopDuration before it
      expect(end!.lastSpeechAt!).toBeGreaterThan(endMs - 150);
      expect(end!.lastSpeechAt!).toBeLessThan(endMs + 250);
      expect(end!.lastSpeechAt!).toBeLessThanOrEqual(end!.atMs + 20 - 400);
    }
  });

  test("quiet under the volume gate counts to the stop as it arrives: the end comes with the frame that completes stopDuration", async () => {
    const rate = 8000;
    const said = await speech("Hello there.", rate);
    const { startMs, endMs } = voiced(said, rate);
    const cut = said.subarray((startMs * rate) / 1000, (endMs * rate) / 1000); // then digital silence
    // where the caller's last sound is (4 ms blocks above the gate, -60 dBFS): the stop is 300 ms after it
    const block = rate / 250;
    let lastSound = cut.length;
    while (lastSound > 0 && rms(cut.subarray(lastSound - block, lastSound)) / 32768 < 0.001) lastSound -= block;
    // the voice's end at several places against the 32 ms windows and the 20 ms frames
    for (const padMs of [500, 508, 516, 524, 532]) {
      const audio = concatPcm([silence(padMs, rate), cut, silence(1000, rate)]);
      const [, end] = await detect(audio, rate, { stopDurationMs: 300 });
      const soundEndMs = padMs + (lastSound * 1000) / rate;
      const arrivedMs = end!.atMs + 20; // the frame that ended the turn arrived at its end
      // never before 300 ms of quiet, and no later than the frame holding the 300th ms
      expect(arrivedMs - soundEndMs).toBeGreaterThanOrEqual(300);
      expect(arrivedMs - soundEndMs).toBeLessThan(300 + 20);
      // and the caller's last speech is put where it was (to the frame it arrived in)
      expect(end!.lastSpeechAt!).toBeGreaterThanOrEqual(soundEndMs);
      expect(end!.lastSpeechAt!).toBeLessThanOrEqual(soundEndMs + 20);
    }
  });

  test("the caller's quiet in a turn is told as it starts, and over with the end or their next words", async () => {
    const rate = 8000;
    const said = await speech("Hello there.", rate);
    const { startMs, endMs } = voiced(said, rate);
    const cut = said.subarray((startMs * rate) / 1000, (endMs * rate) / 1000);
    // two phrases 200 ms apart in one turn (stopDuration 400), then the quiet that ends it
    const audio = concatPcm([silence(500, rate), cut, silence(200, rate), cut, silence(1000, rate)]);
    const events = await detect(audio, rate, { stopDurationMs: 400 }, true);
    expect(events.map((e) => e.type)).toEqual(["start", "pausing", "went on", "pausing", "end", "went on"]);
    const phraseMs = endMs - startMs;
    const [, firstPause, wentOn, lastPause, end, over] = events;
    // the pause is told within two VAD windows of the quiet's start, long before the turn could end
    expect(firstPause!.atMs).toBeGreaterThanOrEqual(500 + phraseMs - 20);
    expect(firstPause!.atMs).toBeLessThan(500 + phraseMs + 100);
    expect(wentOn!.atMs).toBeGreaterThanOrEqual(500 + phraseMs + 200);
    expect(lastPause!.atMs).toBeLessThan(500 + 2 * phraseMs + 200 + 100);
    expect(end!.atMs - lastPause!.atMs).toBeGreaterThan(200);
    expect(over!.atMs).toBe(end!.atMs); // with the end, in the same frame
  });

  test("an STT that decides the turns (Flux) hears each frame as it arrives, not a VAD window later", async () => {
    const heard: number[] = [];
    const detector = await SpeechDetector.create(
      8000,
      base,
      () => {},
      (error) => {
        throw error;
      },
      (audio) => heard.push(audio.length),
    );
    const said = await speech("Hello there.", 8000);
    for (let i = 0; i < 10; i++) {
      detector.push(said.subarray(i * 160, (i + 1) * 160));
      // every frame, at once, though a 256-sample window is complete only on some of them
      expect(heard).toEqual(Array(i + 1).fill(160));
    }
    detector.stop();
  });

  test("silence and noise start no turn", async () => {
    expect(await detect(silence(2000, 8000), 8000)).toEqual([]);
    expect(await detect(noise(2000, 16000, 0.05), 16000)).toEqual([]);
  });

  test("startDuration delays the start; stopDuration moves the end", async () => {
    const { audio } = await utterance(16000);
    const quick = await detect(audio, 16000, { startDurationMs: 0, stopDurationMs: 200 });
    const slow = await detect(audio, 16000, { startDurationMs: 300, stopDurationMs: 900 });
    expect(slow[0]!.atMs - quick[0]!.atMs).toBeGreaterThanOrEqual(250);
    expect(slow[1]!.atMs - quick[1]!.atMs).toBeGreaterThanOrEqual(600);
    expect(slow[1]!.atMs - quick[1]!.atMs).toBeLessThanOrEqual(800);
  });

  test("a longer stopDuration bridges the pause between two phrases", async () => {
    const rate = 8000;
    const said = await speech("Hello there.", rate);
    const { startMs, endMs } = voiced(said, rate);
    const cut = said.subarray((startMs * rate) / 1000, (endMs * rate) / 1000); // without espeak's own pauses
    const audio = concatPcm([silence(500, rate), cut, silence(600, rate), cut, silence(1500, rate)]);
    expect((await detect(audio, rate, { stopDurationMs: 300 })).map((e) => e.type)).toEqual([
      "start",
      "end",
      "start",
      "end",
    ]);
    expect((await detect(audio, rate, { stopDurationMs: 900 })).map((e) => e.type)).toEqual(["start", "end"]);
  });

  test("confidenceThreshold above every probability, or a minVolume above the speech's RMS, starts no turn", async () => {
    const { audio } = await utterance(8000);
    expect(await detect(audio, 8000, { confidenceThreshold: 1.01 })).toEqual([]);
    expect(await detect(audio, 8000, { minVolume: 0.9 })).toEqual([]);
    expect((await detect(audio, 8000, { minVolume: 0.01 })).map((e) => e.type)).toEqual(["start", "end"]);
  });

  test("windows under the volume gate are not scored: a silent caller costs no inference", async () => {
    const scored = spyOn(SileroVad.prototype, "probability");
    try {
      expect(await detect(silence(2000, 8000), 8000)).toEqual([]);
      expect(scored).toHaveBeenCalledTimes(0);
      await detect(noise(1000, 8000, 0.05), 8000); // above the floor: scored (and still no turn, above)
      expect(scored.mock.calls.length).toBeGreaterThanOrEqual(30);
      scored.mockClear();
      // the utterance's 2.1 s of silent padding (65 windows) is skipped; the turn is found as before
      const { audio } = await utterance(8000);
      expect((await detect(audio, 8000)).map((e) => e.type)).toEqual(["start", "end"]);
      expect(scored.mock.calls.length).toBeLessThanOrEqual(Math.floor(audio.length / 256) - 60);
      scored.mockClear();
      // a minVolume above the floor gates more: quieter windows are not scored either
      await detect(noise(1000, 8000, 0.05), 8000, { minVolume: 0.1 });
      expect(scored).toHaveBeenCalledTimes(0);
    } finally {
      scored.mockRestore();
    }
  });

  test("the start carries backbufferDuration of audio before it", async () => {
    const { audio } = await utterance(16000);
    const none = await detect(audio, 16000, { backbufferDurationMs: 0 });
    const second = await detect(audio, 16000, { backbufferDurationMs: 1000 });
    const startMs = (samples: number) => (samples * 1000) / 16000;
    expect(startMs(none[0]!.samples)).toBeLessThan(200);
    expect(startMs(second[0]!.samples) - startMs(none[0]!.samples)).toBeGreaterThan(500); // only 600 ms of pad exist
    expect(startMs(second[0]!.samples) - startMs(none[0]!.samples)).toBeLessThanOrEqual(1050);
  });
});
