// Interruptions (turn_taking's `interruption`) on whole pipeline calls through the bridge: the caller
// speaks (espeak-ng) over the agent's greeting, the Silero VAD in the bridge hears it, the fake
// Deepgram transcribes it as scripted. What the caller hears is compared with the greeting's audio
// (the fake ElevenLabs speaks it with espeak-ng too, at the call's rate: sample for sample).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { speech } from "../helpers/speech";
import { dialNative, type WsCaller } from "../helpers/ws-caller";
import { createAssistant, hookFor } from "../bridge/fixtures";
import { type PipelineWorld, pipelineAssistant, startPipelineWorld } from "./pipeline-fakes";

let pipeline: PipelineWorld;
let world: PipelineWorld["world"];

const rate = 16000;
const frame = rate / 50;
const greeting =
  "Thank you for calling Acme. Our opening hours are nine to five on weekdays, and ten to two on Saturdays. How can I help you today?";

beforeAll(async () => {
  // Deepgram's interim results (the bridge asks for them): the caller's words as they are heard
  pipeline = await startPipelineWorld({ stt: { interimWordMs: 250 } });
  world = pipeline.world;
}, 60_000);
afterAll(() => pipeline?.stop());

const assistantWith = (interruption: Record<string, unknown>) =>
  pipelineAssistant(world, { greeting, turnTaking: { interruption } });

/** A call whose caller says `words` (espeak) once a second of the greeting has been heard. */
async function sayOverGreeting(assistantId: string, words: string) {
  const caller = await dialNative(world.bridge.url, {
    assistantId,
    sampleRate: String(rate),
    token: world.tenant.orgToken,
  });
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.until(() => caller.frames.length >= 50, 15_000, "a second of the greeting");
  caller.watchGaps();
  await caller.say(await speech(words, rate));
  return { caller, callId: ready.callId as string };
}

const streamedRequests = () => world.chat.requests.filter((r) => r.body?.stream).length;

/** The caller heard `audio` once, whole and in order (its last frame padded with silence), and nothing more. */
function expectHeardOnce(heard: Int16Array, audio: Int16Array) {
  expect(heard.length - audio.length).toBeGreaterThanOrEqual(0);
  expect(heard.length - audio.length).toBeLessThan(frame);
  expect(heard.subarray(0, audio.length)).toEqual(audio);
}

/**
 * Waits for the greeting to have played; returns the longest stop in its audio since the caller began
 * to speak (a pause is one; a loaded machine can only make it longer).
 */
async function greetingPlayed(caller: WsCaller) {
  await caller.waitFor((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final, 30_000);
  const longestStopMs = caller.longestGapMs(); // (its final comes as its last frame has played)
  await caller.waitFor((e) => e.type === "turn_done", 10_000);
  return longestStopMs;
}

describe("caller speech over the agent (turn_taking interruption)", () => {
  test("a cough-like sound shorter than minDurationMs does not stop the agent and gets no answer", async () => {
    const assistantId = await assistantWith({ minDurationMs: 1000 });
    const requests = streamedRequests();
    pipeline.stt.transcripts.splice(0); // nothing understood
    const { caller, callId } = await sayOverGreeting(assistantId, "Ahem.");
    await greetingPlayed(caller);
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    expect(caller.events.filter((e) => e.type === "interrupt")).toEqual([]);
    expectHeardOnce(caller.heardAudio(), await speech(greeting, rate));
    const concluded = await hookFor(world, callId, "call_concluded");
    expect((concluded.messages as any[]).filter((m) => m.type === "text")).toEqual([
      expect.objectContaining({ role: "ASSISTANT", text: greeting }),
    ]);
    expect(streamedRequests()).toBe(requests);
  }, 60_000);

  test('an "uh-huh" pauses the agent at most; it goes on, gives no answer, and the uh-huh is in the messages', async () => {
    const assistantId = await assistantWith({});
    const requests = streamedRequests();
    pipeline.stt.transcripts.splice(0, pipeline.stt.transcripts.length, "Uh-huh.");
    const { caller, callId } = await sayOverGreeting(assistantId, "Uh-huh.");
    // paused from 300 ms into the uh-huh until its transcript (the VAD's 300 ms stop, then Finalize)
    expect(await greetingPlayed(caller)).toBeGreaterThan(250);
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    expect(caller.events.filter((e) => e.type === "interrupt")).toEqual([]);
    expectHeardOnce(caller.heardAudio(), await speech(greeting, rate));
    const concluded = await hookFor(world, callId, "call_concluded");
    expect((concluded.messages as any[]).filter((m) => m.type === "text").map((m) => [m.role, m.text])).toEqual([
      ["ASSISTANT", greeting],
      ["USER", "Uh-huh."],
    ]);
    expect(streamedRequests()).toBe(requests);
  }, 60_000);

  test("a false interruption (sound, no words within falseInterruptionMs) resumes mid-sentence, not from its start", async () => {
    const assistantId = await assistantWith({ minDurationMs: 200, falseInterruptionMs: 600 });
    const requests = streamedRequests();
    pipeline.stt.transcripts.splice(0); // a mumble: no words
    const { caller, callId } = await sayOverGreeting(assistantId, "Hmm, well, um, err.");
    expect(await greetingPlayed(caller)).toBeGreaterThanOrEqual(500); // paused for falseInterruptionMs
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    expect(caller.events.filter((e) => e.type === "interrupt")).toEqual([]);
    // the rest of the sentence after the pause, once: the greeting heard whole, no more
    expectHeardOnce(caller.heardAudio(), await speech(greeting, rate));
    const concluded = await hookFor(world, callId, "call_concluded");
    const said = (concluded.messages as any[]).filter((m) => m.role === "ASSISTANT").map((m) => m.text);
    expect(said).toEqual([greeting]);
    expect(streamedRequests()).toBe(requests);
  }, 60_000);

  test("minWords: fewer words over the agent do not cut it off; enough do, as soon as the interim transcript holds them", async () => {
    const assistantId = await assistantWith({ minWords: 3 });
    const requests = streamedRequests();
    // two words: the agent pauses while they are heard, then goes on; they are not answered
    pipeline.stt.transcripts.splice(0, pipeline.stt.transcripts.length, "Sorry, what?");
    const short = await sayOverGreeting(assistantId, "Sorry, what?");
    await greetingPlayed(short.caller);
    short.caller.sendJson({ type: "hangup" });
    await short.caller.closed;
    expect(short.caller.events.filter((e) => e.type === "interrupt")).toEqual([]);
    expectHeardOnce(short.caller.heardAudio(), await speech(greeting, rate));
    const unanswered = await hookFor(world, short.callId, "call_concluded");
    expect((unanswered.messages as any[]).filter((m) => m.type === "text").map((m) => [m.role, m.text])).toEqual([
      ["ASSISTANT", greeting],
      ["USER", "Sorry, what?"],
    ]);
    expect(streamedRequests()).toBe(requests);

    // a question: its third interim word cuts the agent off while the caller is still speaking
    const question = "Hold on, I have a question about the table I booked for next Saturday evening.";
    pipeline.stt.transcripts.splice(0, pipeline.stt.transcripts.length, question);
    world.chat.reply = scriptedReplies([{ text: "Of course, go ahead." }]);
    const long = await sayOverGreeting(assistantId, question);
    await long.caller.waitFor(
      (e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final && e.text === "Of course, go ahead.",
      30_000,
    );
    long.caller.sendJson({ type: "hangup" });
    await long.caller.closed;
    const { events, speechLeft } = long.caller;
    const interrupt = events.findIndex((e) => e.type === "interrupt");
    const interims = events
      .slice(0, interrupt)
      .filter((e) => e.type === "transcript" && e.role === "USER" && !e.final)
      .map((e) => e.text);
    // an interim transcript of at least three words decided, before the caller had finished (a final
    // transcript comes only once the caller has stopped: the VAD's stop, then Finalize)
    expect(interims.at(-1)?.split(" ").length).toBeGreaterThanOrEqual(3);
    expect(speechLeft[interrupt]).toBeGreaterThan(0);
    const concluded = await hookFor(world, long.callId, "call_concluded");
    const texts = (concluded.messages as any[]).filter((m) => m.type === "text").map((m) => [m.role, m.text]);
    expect(texts.slice(1)).toEqual([
      ["USER", question],
      ["ASSISTANT", "Of course, go ahead."],
    ]);
    // the agent's words up to where it was cut off
    const [role, cut] = texts[0]!;
    expect(role).toBe("ASSISTANT");
    expect(greeting.startsWith(cut) && cut.length < greeting.length).toBe(true);
  }, 90_000);

  // the last two run at once (test.concurrent): the Realtime call has a fake provider of its own and
  // uses neither the STT nor the streamed LLM the pipeline call reads
  test.concurrent("enabled: false never cuts the agent off; what the caller said is answered after the reply", async () => {
    const assistantId = await assistantWith({ enabled: false });
    pipeline.stt.transcripts.splice(0, pipeline.stt.transcripts.length, "What are your opening hours?");
    world.chat.reply = scriptedReplies([{ text: "We open at nine." }]);
    const { caller, callId } = await sayOverGreeting(assistantId, "What are your opening hours?");
    await caller.waitFor(
      (e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final && e.text === "We open at nine.",
      30_000,
    );
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    expect(caller.events.filter((e) => e.type === "interrupt")).toEqual([]);
    const [greetingAudio, answer] = await Promise.all([speech(greeting, rate), speech("We open at nine.", rate)]);
    const heard = caller.heardAudio();
    // the whole greeting, then (after its padded last frame) the answer
    expect(heard.subarray(0, greetingAudio.length)).toEqual(greetingAudio);
    const answerAt = Math.ceil(greetingAudio.length / frame) * frame;
    expect(heard.subarray(answerAt, answerAt + answer.length)).toEqual(answer);
    const concluded = await hookFor(world, callId, "call_concluded");
    expect((concluded.messages as any[]).filter((m) => m.type === "text").map((m) => [m.role, m.text])).toEqual([
      ["ASSISTANT", greeting],
      ["USER", "What are your opening hours?"],
      ["ASSISTANT", "We open at nine."],
    ]);
    const request = world.chat.requests.filter((r) => r.body?.stream).at(-1)!;
    expect(request.body.messages.slice(1)).toEqual([
      { role: "assistant", content: greeting },
      { role: "user", content: "What are your opening hours?" },
    ]);
  }, 60_000);

  test.concurrent("openai_realtime: speech shorter than minDurationMs does not cut the agent's audio, nor the provider's response", async () => {
    const { id, fake } = await createAssistant(world, {
      greeting,
      extensions: [{ type: "turn_taking", parameters: { interruption: { minDurationMs: 2000 } } }],
    });
    const { caller } = await sayOverGreeting(id, "Ahem.");
    const session = fake.sessions.at(-1)!;
    // the provider answers the sound (its own VAD, create_response) after the greeting
    await caller.waitFor(
      (e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final && e.text.startsWith("Sorry"),
      30_000,
    );
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    expect(caller.events.filter((e) => e.type === "interrupt")).toEqual([]);
    const said = caller.events.filter((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final);
    expect(said[0].text).toBe(greeting);
    expect(
      session.received.filter((e) => e.type === "conversation.item.truncate" || e.type === "response.cancel"),
    ).toEqual([]);
    const update = session.received.find((e) => e.type === "session.update")!;
    expect(update.session.turn_detection.interrupt_response).toBe(false); // the bridge decides
  }, 60_000);
});
