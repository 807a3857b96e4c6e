// The bench's providers, in their own process so their CPU is not counted as the bridge's or the
// callers' (whose event loop measures the jitter): the fake Realtime server greeting, then answering
// every caller turn with REPLY_CHARS of speech, and the chat completions the call summaries ask for.
import { startFakeChatServer } from "../../test/fakes/chat-completions-server";
import { startFakeRealtimeServer } from "../../test/fakes/openai-realtime-server";

const chars = Number(process.env.REPLY_CHARS ?? 300);
const reply = { text: "x".repeat(chars) };
const fake = await startFakeRealtimeServer({
  onInstructions: () => reply,
  turns: Array.from({ length: 10_000 }, () => ({ userSays: "Tell me more.", reply })),
});
const chat = await startFakeChatServer();
console.log(JSON.stringify({ url: fake.url, chatUrl: chat.baseUrl }));
