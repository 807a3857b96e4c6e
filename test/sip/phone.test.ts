// baresip as a real phone calling the assistant through Kamailio: it speaks a WAV file made with
// espeak-ng and records what it hears; the recording must carry the agent's speech.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { silence, speech } from "../helpers/speech";
import { callFromBaresip } from "./helpers/baresip";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";

let world: SipWorld;
let numberId: string;

beforeAll(async () => {
  world = await startSipWorld({ phone: "phonepass" }, { "+15550500001": "phone" });
  const credentialId = await world.createCredential("phone", "phonepass");
  numberId = await world.createNumber(credentialId, "+15550500001");
  await world.startBridge("phone");
  await world.registered(credentialId);
}, 60_000);
afterAll(() => world?.stop());

/** RMS of each 100 ms window. */
const windows = (samples: Int16Array, rate: number) =>
  Array.from({ length: Math.floor(samples.length / (rate / 10)) }, (_, i) =>
    rms(samples.subarray((i * rate) / 10, ((i + 1) * rate) / 10)),
  );

test("baresip calls the assistant: it hears the greeting and the answer, the agent hears its question", async () => {
  const greeting = "Hello, you are through to the phone desk.";
  const answer = "We open at nine.";
  const greetingAudio = await speech(greeting, 24000);
  const assistant = await world.createAssistant({
    numberId,
    greeting,
    fake: {
      onInstructions: () => ({ text: greeting, audio: greetingAudio }),
      turns: [{ userSays: "When do you open?", reply: { text: answer, audio: await speech(answer, 24000) } }],
    },
  });
  // quiet while the greeting plays (speech would barge in), then the question, then quiet again
  const question = await speech("When do you open?", 8000);
  const say = Int16Array.from([...silence(3500, 8000), ...question, ...silence(4000, 8000)]);
  const phone = await callFromBaresip({
    trunkPort: world.trunk.port,
    dial: "+15550500001",
    from: "+15557654321",
    say,
    seconds: 7,
  });
  expect(phone.heard, phone.output).not.toBeNull();

  // what the phone heard: speech where the agent spoke, digital silence between its utterances
  const heard = phone.heard!;
  expect(heard.sampleRate).toBe(8000);
  const levels = windows(heard.samples, heard.sampleRate);
  const loud = levels.filter((l) => l > 500).length;
  expect(loud).toBeGreaterThan(10); // more than a second of speech
  expect(levels.some((l) => l < 30)).toBe(true);

  const task = await eventually(async () => {
    const t = (await world.tasks((t) => t.assistantId === assistant.id))[0];
    return t && t.status !== "offered" && t.status !== "active" && t;
  }, "the call to end");
  expect(task).toMatchObject({ status: "completed", error: null });
  const concluded = await eventually(
    () => world.hookBodies("call_concluded").find((b) => b.callId === task.callId),
    "call_concluded",
  );
  expect(concluded.transport).toEqual({ type: "sip", calledNumber: "+15550500001", callingNumber: "+15557654321" });
  expect(concluded.messages.map((m: any) => [m.role, m.text])).toEqual([
    ["ASSISTANT", greeting],
    ["USER", "When do you open?"],
    ["ASSISTANT", answer],
  ]);
}, 60_000);
