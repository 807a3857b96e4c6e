// Sends requests one after another from a chosen local address and prints the answers as JSON; run by
// requests-from.ts under Node: Bun's sockets ignore localAddress, and the per-address throttle of
// failed authentication makes each 127.0.0.x another client.
// argv[2]: local address; argv[3]: [{"url": string, "headers": {...}, "method"?: string, "body"?: string}]
import http from "node:http";

type Answer = { status: number; retryAfter: string | null; body: unknown };
const [localAddress, list] = [process.argv[2]!, JSON.parse(process.argv[3] ?? "[]") as Request[]];
type Request = { url: string; headers: Record<string, string>; method?: string; body?: string };

function send({ url, headers, method = "GET", body }: Request): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, localAddress, agent: false }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: (res.headers["retry-after"] as string) ?? null,
          body: JSON.parse(text),
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const answers: Answer[] = [];
for (const request of list) answers.push(await send(request));
process.stdout.write(JSON.stringify(answers));
