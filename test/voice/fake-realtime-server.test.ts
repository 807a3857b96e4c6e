// The fake provider is shared by the bridge tests and the bench: many sessions at once must stay
// independent and cheap, and raw protocol use (explicit commit, errors) must behave like the provider.
import { afterAll, expect, test } from "bun:test";
import WebSocket from "ws";
import { loadConfig } from "../../src/config";
import { createVoiceSession } from "../../src/voice/create-voice-session";
import { startFakeRealtimeServer } from "../fakes/openai-realtime-server";
import { nextEvent } from "./session-events";

const fake = await startFakeRealtimeServer({
  turns: [{ userSays: "(typed)", reply: ({ userText }) => ({ text: `You said ${userText}.` }) }],
});
afterAll(() => fake.close());

test("30 concurrent sessions each get their own conversation", async () => {
  const config = loadConfig({ OPENAI_REALTIME_URL: fake.url });
  const sessions = await Promise.all(
    Array.from({ length: 30 }, () =>
      createVoiceSession(
        { type: "openai_realtime", parameters: {} },
        { instructions: "", greeting: null, tools: [], sampleRate: 8000, config },
      ),
    ),
  );
  const replies = await Promise.all(
    sessions.map((session, i) => {
      const reply = nextEvent(session, "transcript", (t) => t.final);
      session.sendText(`number ${i}`);
      return reply.then(([t]) => t.text);
    }),
  );
  expect(replies).toEqual(sessions.map((_, i) => `You said number ${i}.`));
  for (const session of sessions) session.close();
});

test("raw protocol: explicit commit of an empty buffer is an error event, like the provider's", async () => {
  const ws = new WebSocket(fake.url);
  const events: { type: string; [k: string]: any }[] = [];
  ws.on("message", (data) => events.push(JSON.parse(data.toString())));
  await new Promise((resolve) => ws.once("open", resolve));
  const provider = fake.sessions.at(-1)!;
  ws.send(JSON.stringify({ type: "input_audio_buffer.commit" }));
  await provider.waitFor("input_audio_buffer.commit");
  await Bun.sleep(20);
  expect(events.map((e) => e.type)).toEqual(["session.created", "error"]);
  expect(events[1]!.error.code).toBe("input_audio_buffer_commit_empty");
  ws.close();
});
