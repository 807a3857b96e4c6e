// The providers' websockets (speech-to-text, text-to-speech, Realtime) on Bun's own WebSocket client:
// its upgrade, framing and masking are native work. The `ws` package's client went through node:http's
// upgrade and a JavaScript socket stream, a few ms of the calls' event loop for every socket, at each
// call's start and for each utterance's TTS stream (docs/voice.md, "Latency").
// Provider URLs come from the environment (DEEPGRAM_URL, ELEVENLABS_URL, OPENAI_REALTIME_URL); a tenant
// only picks a model or a voice in their query or path, so these are not tenant destinations and do not
// go through the outbound guard.

import NodeWebSocket from "ws";

export const connectTimeoutMs = 10_000;

/**
 * A socket to a provider, connecting; `headers` carry its credentials. On Node (the worker, whose test
 * runs' simulated callers hear and speak through the same clients) there is no WebSocket client before
 * Node 22: there the `ws` package's, which has the same events, `readyState` and `terminate`.
 */
export function providerSocket(url: string, headers: Record<string, string>): WebSocket {
  if (typeof globalThis.WebSocket === "function") return new WebSocket(url, { headers });
  return new NodeWebSocket(url, { headers }) as unknown as WebSocket;
}

/** Whether the socket is open (`WebSocket.OPEN`, which Node 20 has no global for). */
export const isOpen = (ws: WebSocket) => ws.readyState === 1;

/** The socket's text message (a provider's binary frame as UTF-8 too). */
export function textOf({ data }: MessageEvent): string {
  if (typeof data === "string") return data;
  return (Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)).toString();
}

/** Why the socket failed, without Bun's "WebSocket connection to '<url>' failed: " in front. */
export function socketError(event: Event): string {
  const message = (event as ErrorEvent).message ?? "";
  return message.replace(/^WebSocket connection to '[^']*' failed: /, "") || "connection failed";
}

/** A close's code and reason, as the providers' closed reasons quote them. */
export const closeCode = ({ code, reason }: CloseEvent) => `code ${code}${reason ? `: ${reason}` : ""}`;

/**
 * Resolves once the socket is open; rejects with the provider's refusal (HTTP status), the network
 * error or a time-out, so a session fails at connect with a reason worth reading.
 */
export function opened(ws: WebSocket, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onOpen = () => {
      cleanup();
      resolve();
    };
    const onError = (event: Event) => {
      const why = socketError(event);
      // Bun's words for a refused upgrade, then the ws package's
      const status = /(?:Expected 101 status code|Unexpected server response): (\d+)/.exec(why)?.[1];
      fail(new Error(status ? `${what} refused the connection (HTTP ${status})` : `${what}: ${why}`));
    };
    const onClose = (event: CloseEvent) => fail(new Error(`${what} closed the connection (${closeCode(event)})`));
    const timer = setTimeout(
      () => fail(new Error(`${what} did not answer within ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    );
    function cleanup() {
      clearTimeout(timer);
      ws.removeEventListener("open", onOpen);
      ws.removeEventListener("error", onError);
      ws.removeEventListener("close", onClose);
    }
    function fail(error: Error) {
      cleanup();
      ws.terminate();
      reject(error);
    }
    ws.addEventListener("open", onOpen);
    ws.addEventListener("error", onError);
    ws.addEventListener("close", onClose);
  });
}
