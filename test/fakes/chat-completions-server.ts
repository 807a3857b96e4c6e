// A local OpenAI-compatible chat completions endpoint answering with a scripted summary.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export type ChatMode = "ok" | "error" | "not-json" | "hang";
export type ChatRequest = { path: string; headers: IncomingHttpHeaders; body: any };

export type FakeChatServer = {
  /** Base URL to use as OPENAI_BASE_URL (requests go to `${baseUrl}/chat/completions`). */
  baseUrl: string;
  requests: ChatRequest[];
  /** What the next requests get: the scripted JSON, a 500, a reply that is not JSON, or no answer. */
  mode: ChatMode;
  summary: { shortSummary: string; summary: string };
  close(): Promise<void>;
};

export async function startFakeChatServer(summary = { shortSummary: "Caller asked about opening hours.", summary: "The caller asked when the shop opens; the assistant said 9 am to 5 pm." }): Promise<FakeChatServer> {
  const fake: FakeChatServer = { baseUrl: "", requests: [], mode: "ok", summary, close: async () => {} };
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      fake.requests.push({ path: req.url ?? "", headers: req.headers, body: JSON.parse(raw || "null") });
      if (fake.mode === "hang") return; // never answers; the client must time out
      if (req.url !== "/v1/chat/completions" || fake.mode === "error") {
        return res.writeHead(fake.mode === "error" ? 500 : 404, { "Content-Type": "application/json" }).end('{"error":{"message":"boom"}}');
      }
      const content = fake.mode === "not-json" ? "Here is your summary: it went well." : JSON.stringify(fake.summary);
      res.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({
          id: "chatcmpl-fake",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: req.headers["x-model"] ?? "fake",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
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
