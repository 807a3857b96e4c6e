// A local OpenAI-compatible chat completions endpoint: a scripted summary for plain requests, and for
// `stream: true` a scripted reply streamed as server-sent chat.completion.chunk events (text in small
// fragments, tool calls split across chunks by index, the way the API streams them).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { wallClock } from "./wall-clock";

export type ChatMode = "ok" | "error" | "not-json" | "hang";
/**
 * `at`: arrival; `firstContentAt`: when the first text chunk of a streamed reply went out; `endedAt`:
 * when the whole answer had been written (wallClock).
 */
export type ChatRequest = {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  at: number;
  firstContentAt?: number;
  endedAt?: number;
};
export type StreamedReply = { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] };
type ChatMessage = {
  role: string;
  content?: string | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string } }[];
};

/**
 * The default streamed script: after tool results it quotes them ("name: output; ..."), otherwise it
 * answers the next of `turns` (then echoes the caller).
 */
export function scriptedReplies(turns: StreamedReply[]): (body: { messages: ChatMessage[] }) => StreamedReply {
  let next = 0;
  return ({ messages }) => {
    const last = messages.at(-1);
    if (last?.role === "tool") {
      const results: string[] = [];
      for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "tool"; i--) {
        const m = messages[i]!;
        const call = messages.flatMap((x) => x.tool_calls ?? []).find((c) => c.id === m.tool_call_id);
        results.unshift(`${call?.function.name ?? "tool"}: ${m.content}`);
      }
      return { text: results.join("; ") };
    }
    return turns[next++] ?? { text: `You said: ${last?.content ?? ""}` };
  };
}

export type FakeChatServer = {
  /** Base URL to use as OPENAI_BASE_URL (requests go to `${baseUrl}/chat/completions`). */
  baseUrl: string;
  requests: ChatRequest[];
  /** What the next requests get: the scripted JSON, a 500, a reply that is not JSON, or no answer. */
  mode: ChatMode;
  summary: { shortSummary: string; summary: string };
  /** The contents the next plain requests get, one each, before `summary` again (a summary with its analysis). */
  answers: unknown[];
  /** What a `stream: true` request gets. */
  reply: (body: any) => StreamedReply;
  /** When set, what a plain request's message is (else the summary as JSON): a judge's or a simulated caller's answer. */
  complete: ((body: any) => { content: string | null; tool_calls?: unknown[] }) | null;
  /** Wait before the first streamed chunk (a model's time to first token). */
  firstTokenDelayMs: number;
  /** Characters per streamed text chunk (4, like tokens; a bench sends a sentence at once). */
  chunkChars: number;
  close(): Promise<void>;
};

export async function startFakeChatServer(
  summary = {
    shortSummary: "Caller asked about opening hours.",
    summary: "The caller asked when the shop opens; the assistant said 9 am to 5 pm.",
  },
): Promise<FakeChatServer> {
  const fake: FakeChatServer = {
    baseUrl: "",
    requests: [],
    mode: "ok",
    summary,
    answers: [],
    reply: scriptedReplies([]),
    complete: null,
    firstTokenDelayMs: 0,
    chunkChars: 4,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      fake.requests.push({
        path: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(raw || "null"),
        at: wallClock(),
      });
      if (fake.mode === "hang") return; // never answers; the client must time out
      if (req.url !== "/v1/chat/completions" || fake.mode === "error") {
        return res
          .writeHead(fake.mode === "error" ? 500 : 404, { "Content-Type": "application/json" })
          .end('{"error":{"message":"boom"}}');
      }
      const request = fake.requests.at(-1)!;
      if (request.body?.stream === true) return void streamReply(res, fake.reply(request.body), request, fake);
      const content =
        fake.mode === "not-json"
          ? "Here is your summary: it went well."
          : JSON.stringify(fake.answers.length > 0 ? fake.answers.shift() : fake.summary);
      const message = fake.complete?.(request.body) ?? { content };
      request.endedAt = wallClock();
      res.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({
          id: "chatcmpl-fake",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: req.headers["x-model"] ?? "fake",
          choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return fake;
}

const chunkOf = (model: string, delta: object, finishReason: string | null = null) => ({
  id: "chatcmpl-fake",
  object: "chat.completion.chunk",
  created: Math.floor(Date.now() / 1000),
  model,
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

/** Splits a string into pieces of a few characters, like tokens. */
const pieces = (text: string, size = 4) => text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];

async function streamReply(res: ServerResponse, reply: StreamedReply, request: ChatRequest, fake: FakeChatServer) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  const body = request.body;
  const model = String(body.model ?? "fake");
  const send = (data: object | string) =>
    res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  if (fake.firstTokenDelayMs) await Bun.sleep(fake.firstTokenDelayMs);
  send(chunkOf(model, { role: "assistant", content: "" }));
  for (const piece of pieces(reply.text ?? "", fake.chunkChars)) {
    if (res.destroyed) return;
    request.firstContentAt ??= wallClock();
    send(chunkOf(model, { content: piece }));
    await Bun.sleep(1);
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    const id = `call_fake${index}_${Math.random().toString(36).slice(2, 8)}`;
    send(
      chunkOf(model, { tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const piece of pieces(JSON.stringify(call.arguments), 5))
      send(chunkOf(model, { tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  send(chunkOf(model, {}, reply.toolCalls?.length ? "tool_calls" : "stop"));
  if (body.stream_options?.include_usage)
    send({ ...chunkOf(model, {}), choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  send("[DONE]");
  request.endedAt = wallClock();
  res.end();
}
