// The latency recorder driven by hand, without an engine: which answer's stages a turn takes, when
// its answer is over, and the voice-to-voice summary against the turns.
import { expect, test } from "bun:test";
import { TurnLatencyRecorder } from "../../src/calls/turn-latency";

const t0 = performance.now();

/** A caller turn that ended at t0 + `ended` and was decided `endpointing` ms later. */
const turnAt = (recorder: TurnLatencyRecorder, ended: number, endpointing: number, preemptive = false) =>
  recorder.callerTurn({ endedAt: t0 + ended, decidedAt: t0 + ended + endpointing, preemptive });
const stage = (recorder: TurnLatencyRecorder, name: "llm" | "tts", from: number, to: number) =>
  recorder.replyStage({ stage: name, startedAt: t0 + from, at: t0 + to });

test("a turn takes its answer's stages and first frame; the greeting before it and prompts after it count for none", () => {
  const recorder = new TurnLatencyRecorder(true);
  stage(recorder, "tts", 0, 90); // the greeting: no turn yet
  expect(recorder.replyAudio()).toBeNull();
  turnAt(recorder, 1000, 400, true);
  stage(recorder, "llm", 1450, 1750);
  stage(recorder, "llm", 2500, 2600); // a later round of the same answer (after a tool) does not move it
  stage(recorder, "tts", 1760, 1910);
  const sent = recorder.replyAudio();
  expect(recorder.replyAudio()).toBeNull(); // only the answer's first audio is timed
  sent?.(t0 + 2000);
  recorder.replyDone({ interrupted: false });
  stage(recorder, "tts", 9000, 9100); // an idle prompt after the answer: not this turn's
  const { turns, voiceToVoiceMs } = recorder.finish();
  expect(turns).toEqual([
    {
      index: 1,
      callerEndedAt: expect.any(String),
      endpointingMs: 400,
      llmFirstTokenMs: 300,
      ttsFirstAudioMs: 150,
      voiceToVoiceMs: 1000,
      interrupted: false,
      preemptive: true,
    },
  ]);
  expect(Math.abs(Date.parse(turns[0]!.callerEndedAt) - (Date.now() - (performance.now() - t0 - 1000)))).toBeLessThan(
    5,
  );
  expect(voiceToVoiceMs).toEqual({ p50: 1000, p95: 1000, max: 1000 });
});

test("an answer cut off before its first frame is sent: interrupted, no voice-to-voice; the next turn is measured", () => {
  const recorder = new TurnLatencyRecorder(true);
  turnAt(recorder, 0, 300);
  stage(recorder, "llm", 310, 700);
  recorder.replyAudio(); // queued, then flushed by the barge-in: never sent
  recorder.replyDone({ interrupted: true });
  stage(recorder, "tts", 710, 800); // what the cancelled answer still reports
  turnAt(recorder, 2000, 300);
  stage(recorder, "llm", 2310, 2500);
  recorder.replyAudio()?.(t0 + 2900);
  const { turns, voiceToVoiceMs } = recorder.finish();
  expect(turns.map((t) => [t.index, t.interrupted, t.ttsFirstAudioMs, t.voiceToVoiceMs])).toEqual([
    [1, true, null, null],
    [2, false, null, 900],
  ]);
  expect(voiceToVoiceMs).toEqual({ p50: 900, p95: 900, max: 900 });
});

test("an answer that began with a tool call keeps its turn until its audio (Realtime answers it in a second response)", () => {
  const recorder = new TurnLatencyRecorder(true);
  turnAt(recorder, 0, 500);
  stage(recorder, "llm", 500, 650); // the function call's arguments
  recorder.replyDone({ interrupted: false }); // that response is done: the answer is not
  stage(recorder, "llm", 900, 1000);
  recorder.replyAudio()?.(t0 + 1200);
  expect(recorder.finish().turns[0]).toMatchObject({ llmFirstTokenMs: 150, voiceToVoiceMs: 1200 });
});

test("text turns: only the LLM's stage, and no voice-to-voice summary", () => {
  const recorder = new TurnLatencyRecorder(false);
  recorder.textTurn(t0);
  stage(recorder, "llm", 1, 301);
  expect(recorder.replyAudio()).toBeNull();
  recorder.replyDone({ interrupted: false });
  recorder.textTurn(t0 + 5000);
  expect(recorder.finish()).toEqual({
    turns: [
      expect.objectContaining({ index: 1, endpointingMs: null, llmFirstTokenMs: 300, voiceToVoiceMs: null }),
      expect.objectContaining({ index: 2, endpointingMs: null, llmFirstTokenMs: null, ttsFirstAudioMs: null }),
    ],
    voiceToVoiceMs: null,
  });
});

test("p50, p95 and max are the nearest-rank values of the turns that were measured", () => {
  const recorder = new TurnLatencyRecorder(true);
  const v2v = [700, 1500, 900, 1100, 650];
  v2v.forEach((ms, i) => {
    turnAt(recorder, i * 10_000, 200);
    stage(recorder, "llm", i * 10_000 + 200, i * 10_000 + 400);
    recorder.replyAudio()?.(t0 + i * 10_000 + ms);
    recorder.replyDone({ interrupted: false });
  });
  turnAt(recorder, 60_000, 200); // the caller hung up before the answer
  const latency = recorder.finish();
  expect(latency.turns.map((t) => t.voiceToVoiceMs)).toEqual([...v2v, null]);
  expect(latency.voiceToVoiceMs).toEqual({ p50: 900, p95: 1500, max: 1500 });
});

test("an answer without an LLM (the greeting answering a callee's first words) is timed from its first stage", () => {
  const recorder = new TurnLatencyRecorder(true);
  turnAt(recorder, 0, 300);
  stage(recorder, "tts", 320, 470);
  recorder.replyAudio()?.(t0 + 500);
  recorder.replyDone({ interrupted: false });
  stage(recorder, "llm", 5000, 5300); // a later answer (a DTMF's, say): not this turn's
  expect(recorder.finish().turns[0]).toMatchObject({
    endpointingMs: 300,
    llmFirstTokenMs: null,
    ttsFirstAudioMs: 150,
    voiceToVoiceMs: 500,
  });
});
