// Sends GET requests one after another from a chosen local address and prints the answers as JSON.
// Runs under Node: Bun's sockets ignore localAddress, and the throttle tests need several "clients".
// argv[2]: local address; argv[3]: [{"url": string, "headers": {...}}]
import http from "node:http";

type Answer = { status: number; retryAfter: string | null; body: unknown };
const [localAddress, list] = [
  process.argv[2]!,
  JSON.parse(process.argv[3] ?? "[]") as { url: string; headers: Record<string, string> }[],
];

function get(url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, localAddress, agent: false }, (res) => {
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
  });
}

const answers: Answer[] = [];
for (const { url, headers } of list) answers.push(await get(url, headers));
process.stdout.write(JSON.stringify(answers));
