// The pipeline and conversation benches' providers, in their own process so their CPU is not the
// bridge's: Deepgram (Flux's /v2/listen too), ElevenLabs and chat completions fakes answering after fixed delays. The first TAGGED_STREAMS calls
// get turns tagged "s<call>t<turn>" (so each stage's timestamps can be matched per turn); the others
// say and hear the same cached sentences. GET /timings returns the timestamps. With KNOWLEDGE_QUERY,
// odd tagged turns first call the knowledge tool with that query, and answer after its result.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startFakeChatServer } from "../../test/fakes/chat-completions-server";
import { startFakeDeepgram } from "../../test/fakes/deepgram-server";
import { startFakeElevenLabs } from "../../test/fakes/elevenlabs-server";

const tagged = Number(process.env.TAGGED_STREAMS ?? 0);
// a tagged turn's words end without punctuation on odd turns (a caller who seems mid-sentence)
const unpunctuatedOddTurns = process.env.UNPUNCTUATED_ODD_TURNS === "1";
const plainAnswer = "Sure. Here is a short answer for you, nothing more.";

const stt = await startFakeDeepgram({
  transcript: (stream, turn) =>
    stream < tagged ? `Question s${stream}t${turn}${unpunctuatedOddTurns && turn % 2 ? "" : "."}` : "Tell me more.",
});
const tagOf = (text: string) => /s\d+t\d+/.exec(text)?.[0] ?? null;
const tts = await startFakeElevenLabs({
  firstAudioDelayMs: Number(process.env.TTS_DELAY_MS ?? 0),
  // a tagged sentence is new every turn: espeak for each would load the machine and the fake's times
  speakAs: (text) => (tagOf(text) ? "Answer." : text),
});
const llm = await startFakeChatServer();
llm.firstTokenDelayMs = Number(process.env.LLM_DELAY_MS ?? 0);
llm.chunkChars = 1000; // the first sentence in one chunk: its arrival is the first token
const knowledgeQuery = process.env.KNOWLEDGE_QUERY;
llm.reply = ({ messages }) => {
  const last = messages.at(-1);
  const asked = last?.role === "tool" ? messages.findLast((m: { role: string }) => m.role === "user") : last;
  const tag = /s\d+t(\d+)/.exec(String(asked?.content ?? ""));
  if (tag && knowledgeQuery && last?.role !== "tool" && Number(tag[1]) % 2 === 1)
    return { toolCalls: [{ name: "search_knowledge_base", arguments: { query: knowledgeQuery } }] };
  return { text: tag ? `Answer ${tag[0]}. That is all.` : plainAnswer };
};

const timings = () => ({
  finalizes: stt.streams.flatMap((s) =>
    s.control.filter((c) => c.type === "Finalize").map((c, turn) => ({ tag: `s${s.index}t${turn}`, at: c.at })),
  ),
  llm: llm.requests
    .filter((r) => r.body?.stream && tagOf(String(r.body.messages.at(-1)?.content ?? "")))
    .map((r) => ({
      tag: tagOf(String(r.body.messages.at(-1).content)),
      at: r.at,
      firstContentAt: r.firstContentAt ?? null,
    })),
  tts: tts.streams
    .flatMap((s) => s.timings)
    .filter((t) => tagOf(t.text))
    .map((t) => ({ tag: tagOf(t.text), ...t })),
});

const http = createServer((_req, res) =>
  res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(timings())),
);
await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
console.log(
  JSON.stringify({
    stt: stt.url,
    tts: tts.url,
    llm: llm.baseUrl,
    timings: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`,
  }),
);
