// Call-path defects, each through a real bridge and the fake realtime provider: a barge-in tells the
// provider how much of the reply was heard and the stored text keeps only that; a blank transcription
// of one caller turn does not shift the times of the turns after it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { speech } from "../helpers/speech";
import { dialNative } from "../helpers/ws-caller";
import { agentTask, createAssistant, startWorld, type World } from "./fixtures";

let world: World;

beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
});

/** The messages stored with a concluded call (its call_concluded history). */
async function concludedMessages(callId: string): Promise<any[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const task = await agentTask(world, callId);
    if (task && task.status !== "active") {
      const record = await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${task.id}`);
      return record.body.data.messages;
    }
    if (Date.now() > deadline) throw new Error(`call ${callId} not concluded`);
    await Bun.sleep(100);
  }
}

const reply =
  "We are open from nine in the morning to five in the afternoon, Monday to Friday, and from ten to two on " +
  "Saturdays. You can book a table, ask about an order, or leave a message for the manager. On public " +
  "holidays we open at noon, and the kitchen closes an hour before we do, so please come early for dinner.";

// the two calls, each with a fake provider of its own, run at once (test.concurrent): each is mostly
// speech played out in real time
test.concurrent("barge-in: the provider is told what was heard (conversation.item.truncate) and the stored text is cut to it", async () => {
  const assistant = await createAssistant(world, {
    fake: { turns: [{ userSays: "When are you open?", reply: { text: reply } }] },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: assistant.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  const provider = await assistant.fake.nextSession();
  caller.startStreaming();
  await caller.say(await speech("When are you open?", 16000));
  // about a second of the reply (its audio is some 4 s: a loaded machine may take a second or more to
  // notice the caller's speech, and the reply must still be playing then), then the caller talks over it
  await caller.waitFor((e) => e.type === "transcript" && e.role === "ASSISTANT");
  const framesBefore = caller.frames.length;
  while ((caller.frames.length - framesBefore) * 20 < 1_000) await Bun.sleep(20);
  const truncated = provider.waitFor("conversation.item.truncate");
  await caller.say(await speech("Sorry, what about Sundays?", 16000));
  const truncate = await truncated;
  await caller.waitFor((e) => e.type === "interrupt");
  const replyMs = reply.length * 12; // the fake speaks 12 ms per character
  expect(truncate).toMatchObject({ type: "conversation.item.truncate", item_id: expect.any(String), content_index: 0 });
  expect(truncate.audio_end_ms).toBeGreaterThan(900);
  expect(truncate.audio_end_ms).toBeLessThan(replyMs - 200);

  caller.sendJson({ type: "hangup" });
  await caller.closed;
  const said = (await concludedMessages(callId)).filter((m) => m.role === "ASSISTANT" && m.type === "text");
  expect(said).toHaveLength(1);
  const heard: string = said[0].text;
  expect(reply.startsWith(heard)).toBe(true);
  // whole words, and about the share of the text that the share of the audio played
  expect(reply[heard.length]).toBe(" ");
  expect(Math.abs(heard.length / reply.length - truncate.audio_end_ms / replyMs)).toBeLessThan(0.1);
}, 30_000);

test.concurrent("a blank transcription of one caller turn does not shift the times of the later turns", async () => {
  const assistant = await createAssistant(world, {
    fake: {
      turns: [
        { userSays: "", reply: { text: "Sorry, could you say that again?" } },
        { userSays: "Two seats, please.", reply: { text: "Booked." } },
      ],
    },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: assistant.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.say(await speech("Mumble mumble.", 16000));
  await caller.waitForAgentSaid("Sorry, could you say that again?");
  await caller.say(await speech("Two seats, please.", 16000));
  await caller.waitForAgentSaid("Booked.");
  caller.sendJson({ type: "hangup" });
  await caller.closed;

  const messages = [...(await concludedMessages(callId))].sort((a, b) => a.timestamp - b.timestamp);
  expect(messages.map((m) => [m.type, m.role, m.text ?? null])).toEqual([
    ["audio", "USER", null], // the turn nobody could transcribe, kept as what was said
    ["text", "ASSISTANT", "Sorry, could you say that again?"],
    ["text", "USER", "Two seats, please."],
    ["text", "ASSISTANT", "Booked."],
  ]);
  // no blank transcript reached the caller either
  expect(caller.events.filter((e) => e.type === "transcript" && !e.text)).toEqual([]);
}, 30_000);
