// The bench's voice provider, in its own process so its CPU is not counted as the bridge's or the
// callers': the fake Realtime server greeting, then answering every caller turn with REPLY_CHARS of speech.
import { startFakeRealtimeServer } from "../../test/fakes/openai-realtime-server";

const chars = Number(process.env.REPLY_CHARS ?? 300);
const reply = { text: "x".repeat(chars) };
const fake = await startFakeRealtimeServer({
  onInstructions: () => reply,
  turns: Array.from({ length: 10_000 }, () => ({ userSays: "Tell me more.", reply })),
});
console.log(JSON.stringify({ url: fake.url }));
