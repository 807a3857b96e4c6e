// Opening a provider websocket: resolves once open, rejects with the provider's refusal (HTTP status),
// the network error or a time-out, so a session fails at connect with a reason worth reading.
import type WebSocket from "ws";

export const connectTimeoutMs = 10_000;

export function opened(ws: WebSocket, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onOpen = () => {
      cleanup();
      resolve();
    };
    const onRefused = (_request: unknown, response: { statusCode?: number }) =>
      fail(new Error(`${what} refused the connection (HTTP ${response.statusCode})`));
    const onError = (error: Error) => fail(new Error(`${what}: ${error.message}`));
    const timer = setTimeout(
      () => fail(new Error(`${what} did not answer within ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    );
    function cleanup() {
      clearTimeout(timer);
      ws.off("open", onOpen);
      ws.off("unexpected-response", onRefused);
      ws.off("error", onError);
    }
    function fail(error: Error) {
      cleanup();
      ws.on("error", () => {}); // terminating a socket still connecting reports an error of its own
      ws.terminate();
      reject(error);
    }
    ws.on("open", onOpen);
    ws.on("unexpected-response", onRefused);
    ws.on("error", onError);
  });
}
