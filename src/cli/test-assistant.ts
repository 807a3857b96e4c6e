// Runs an assistant's tests from CI (docs/testing-assistants.md):
//   bun run test-assistant --api <P URL> --token <t> --assistant <id> (--suite <id> | --scenario <id>... | --file tests.json)
//     [--modality text|audio] [--repeat N] [--concurrency N] [--junit report.xml] [--timeout 1800]
// Shows progress, waits for the run, prints each result; exits 0 passed, 1 failed or flaky,
// 2 invalid input, 3 incomplete (canceled, error, or out of time).
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";

type Criterion = { required: boolean; verdict: string; reason: string };
type Run = {
  id: string;
  status: string;
  verdict: string | null;
  counts: { total: number; passed: number; failed: number; error: number };
};
type Result = { status: string; scenarioName: string; iteration: number; error: string | null; criteria: Criterion[] };
type Envelope<T> = { message?: string; errors?: { field: string; message: string }[]; data?: T; totalPages?: number };

const EXIT = { passed: 0, failed: 1, invalid: 2, incomplete: 3 } as const;

const usage =
  "usage: test-assistant --api <organization URL> --token <token> (--assistant <id> | --agent <id>) " +
  "(--suite <id> | --scenario <id> ... | --file <tests.json>) [--modality text|audio] [--repeat N] " +
  "[--concurrency N] [--junit <file>] [--timeout <seconds>]";

function fail(code: number, message: string): never {
  console.error(message);
  process.exit(code);
}

let values: Record<string, string | string[] | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      api: { type: "string" },
      token: { type: "string" },
      assistant: { type: "string" },
      agent: { type: "string" },
      suite: { type: "string" },
      scenario: { type: "string", multiple: true },
      file: { type: "string" },
      modality: { type: "string" },
      repeat: { type: "string" },
      concurrency: { type: "string" },
      junit: { type: "string" },
      timeout: { type: "string" },
    },
  }));
} catch (error) {
  fail(EXIT.invalid, `${(error as Error).message}\n${usage}`);
}
const str = (name: string) => values[name] as string | undefined;
const api = str("api")?.replace(/\/+$/, "");
const token = str("token") ?? process.env.VAS_TOKEN;
if (!api || !token) fail(EXIT.invalid, usage);
const sources = [str("suite"), values.scenario, str("file")].filter((v) => v !== undefined);
if (sources.length !== 1 || !str("assistant") === !str("agent")) fail(EXIT.invalid, usage);

const int = (name: string) => {
  const raw = str(name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) fail(EXIT.invalid, `--${name} must be a positive integer`);
  return n;
};

async function call<T = Run>(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: Error) => fail(EXIT.incomplete, `the API is unreachable: ${error.message}`));
  const text = await res.text();
  // the API's envelope, read as it is documented (clients/typescript has the full types)
  let json: Envelope<T> | null = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

let scenarios: unknown;
if (str("file")) {
  try {
    scenarios = JSON.parse(await readFile(str("file")!, "utf8"));
  } catch (error) {
    fail(EXIT.invalid, `--file: ${(error as Error).message}`);
  }
  if (!Array.isArray(scenarios)) fail(EXIT.invalid, "--file must hold a JSON array of scenarios");
}

const created = await call("POST", "/test-runs", {
  ...(str("assistant") ? { assistantId: str("assistant") } : { agentId: str("agent") }),
  ...(str("suite") && { suiteId: str("suite") }),
  ...(values.scenario && { scenarioIds: values.scenario }),
  ...(scenarios !== undefined && { scenarios }),
  ...(str("modality") && { modality: str("modality") }),
  ...(int("repeat") && { repeat: int("repeat") }),
  ...(int("concurrency") && { concurrency: int("concurrency") }),
  labels: { source: "test-assistant" },
});
if (created.status === 400 || created.status === 404 || created.status === 401 || created.status === 403) {
  const fields = (created.json?.errors ?? []).map(
    (e: { field: string; message: string }) => `  ${e.field}: ${e.message}`,
  );
  fail(EXIT.invalid, [`refused (${created.status}): ${created.json?.message ?? created.text}`, ...fields].join("\n"));
}
if (created.status !== 202) fail(EXIT.incomplete, `the run was not created (${created.status}): ${created.text}`);
let run = created.json!.data!;
const runId = run.id;
console.log(`run ${runId}: ${run.counts.total} call(s)`);

const deadline = Date.now() + (int("timeout") ?? 1800) * 1000;
let shown = "";
while (run.status === "queued" || run.status === "running") {
  if (Date.now() > deadline) {
    await call("POST", `/test-runs/${runId}/cancel`);
    fail(EXIT.incomplete, `run ${runId}: out of time, canceled`);
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  run = (await call("GET", `/test-runs/${runId}`)).json?.data ?? run;
  const { total, passed, failed, error } = run.counts;
  const line = `${run.status}: ${passed + failed + error}/${total} done (${passed} passed, ${failed} failed, ${error} error)`;
  if (line !== shown) console.log(line);
  shown = line;
}

for (let page = 0; ; page++) {
  const results = (await call<Result[]>("GET", `/test-runs/${runId}/results?size=100&page=${page}`)).json;
  for (const r of results?.data ?? []) {
    const why =
      r.status === "error" ? r.error : r.criteria.find((c: Criterion) => c.required && c.verdict !== "pass")?.reason;
    console.log(`${r.status.padEnd(6)} ${r.scenarioName} #${r.iteration}${why ? ` (${why})` : ""}`);
  }
  if (!results || page + 1 >= (results.totalPages ?? 0)) break;
}
if (str("junit")) {
  const junit = await call("GET", `/test-runs/${runId}/junit`);
  await writeFile(str("junit")!, junit.text);
  console.log(`JUnit written to ${str("junit")}`);
}
console.log(`run ${runId}: ${run.status}, verdict ${run.verdict ?? "none"}`);
if (run.verdict === "passed") process.exit(EXIT.passed);
if (run.verdict === "failed" || run.verdict === "flaky") process.exit(EXIT.failed);
process.exit(EXIT.incomplete);
