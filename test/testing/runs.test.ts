// A test run end to end: the API queues it, the worker's workflow places each scenario's call through
// the bridge's websocket in the text modality (pipeline engine, the LLM a local chat-completions
// server), mocks answer the tools, hooks are captured into the result (never sent), verdicts and JUnit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDb } from "../../src/db/client";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { createBookingAssistant } from "../helpers/api";
import { startWorld, type World } from "../bridge/fixtures";
import { callConcluded, createAssistantWithHooks, emitOne, openDb } from "../hooks/fixtures";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { eventually } from "../sip/helpers/eventually";
import { untilRunEnded } from "./run-world";

let world: World;
let worker: TestWorker;
let assistantId: string;
let otherOrgHooks: Receiver;
const database = openDb();

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [world, otherOrgHooks] = await Promise.all([startWorld(), startReceiver()]);
  worker = await startWorker({
    address,
    backoffBaseMs: 1_000,
    // a dead or stalled worker's result is taken over after 6 s instead of the default 30 s
    env: { BRIDGE_URL: world.bridge.url, OPENAI_BASE_URL: world.chat.baseUrl, TEST_RUN_HEARTBEAT_TIMEOUT_MS: "6000" },
  });
  assistantId = await createBookingAssistant(world.tenant, {
    systemPromptGreeting: "Luigi's, how can I help?",
    callEventHooks: ["call_started", "call_concluded"].map((type) => ({
      type,
      parameters: { url: `${world.hooks.url}/hooks` },
    })),
  });
}, 90_000);
afterAll(async () => {
  await worker?.kill();
  await world?.stop();
  await otherOrgHooks?.close();
  await database.close();
});

const untilEnded = (runId: string, timeoutMs?: number) => untilRunEnded(world, worker, runId, timeoutMs);

/** A run of one scripted caller who says "Hello?". */
const helloRun = (scenario: { name: string; criteria: unknown[] }) =>
  world.tenant.org.post(`${world.tenant.P}/test-runs`, {
    assistantId,
    scenarios: [{ kind: "scripted", turns: [{ say: "Hello?" }], ...scenario }],
  });

describe("a text run", () => {
  test("scripted callers through the bridge: mocks, captured hooks, one scenario passing and one failing", async () => {
    const { tenant } = world;
    // each caller turn: the first asks for the tool, the LLM then quotes the tool's result
    world.chat.reply = scriptedReplies([
      { toolCalls: [{ name: "book_table", arguments: { people: 2, time: "19:00" } }] },
      { text: "Goodbye then." },
      { toolCalls: [{ name: "book_table", arguments: { people: 2, time: "19:00" } }] },
      { text: "Goodbye then." },
    ]);
    const books = {
      name: "books a table",
      kind: "scripted",
      turns: [{ say: "A table for two at seven." }, { say: "No, thanks." }],
      toolMocks: [{ tool: "book_table", arguments: { people: 2 }, output: { ok: true, table: 12 } }],
      criteria: [
        { name: "booked", type: "toolCalled", tool: "book_table", arguments: { people: 2 } },
        { name: "quotes the table", type: "said", pattern: "table.{0,4}12", by: "agent" },
        { name: "no refund talk", type: "notSaid", pattern: "refund", by: "caller" },
        { name: "caller hung up", type: "endedReason", in: ["hangup"] },
        { name: "all mocked", type: "noUnmockedTools" },
      ],
    };
    const rude = {
      ...books,
      name: "says ciao",
      criteria: [{ name: "ciao", type: "said", pattern: "ciao", by: "agent" }],
    };
    const created = await tenant.org.post(`${tenant.P}/test-runs`, {
      assistantId,
      scenarios: [books, rude],
      concurrency: 1,
      labels: { commit: "abc" },
    });
    expect(created.status).toBe(202);
    const run = await untilEnded(created.body.data.id);
    expect(run).toMatchObject({
      status: "completed",
      verdict: "failed",
      counts: { total: 2, passed: 1, failed: 1, error: 0, pending: 0 },
    });

    const results = (await tenant.org.get(`${tenant.P}/test-runs/${run.id}/results`)).body.data;
    const [passed, failed] = results;
    expect(passed).toMatchObject({ scenarioName: "books a table", iteration: 1, status: "passed", error: null });
    expect(passed.criteria.map((c: { verdict: string }) => c.verdict)).toEqual([
      "pass",
      "pass",
      "pass",
      "pass",
      "pass",
    ]);
    expect(passed.metrics).toMatchObject({ turns: 2, firstAudioMs: null });
    expect(passed.hooks.map((h: { type: string }) => h.type).sort()).toEqual(["call_concluded", "call_started"]);
    expect(failed).toMatchObject({ scenarioName: "says ciao", status: "failed" });
    expect(failed.criteria[0]).toMatchObject({ verdict: "fail", reason: "no agent utterance matches /ciao/i" });

    // the real call behind it: an agent task of the run, with the mock's answer in its messages
    const task = (await tenant.org.get(`${tenant.P}/agent-tasks/${passed.agentTaskId}`)).body.data;
    expect(task).toMatchObject({ testRunId: run.id, endedReason: "hangup", status: "completed" });
    const toolResult = task.messages.find((m: { type: string }) => m.type === "tool_result");
    expect(toolResult.text).toBe('{"ok":true,"table":12}');
    // test calls are listed only by their run, and their hooks never reach the customer
    const listed = (await tenant.org.get(`${tenant.P}/agent-tasks?size=100`)).body.data.map(
      (t: { id: string }) => t.id,
    );
    expect(listed).not.toContain(passed.agentTaskId);
    const byRun = (await tenant.org.get(`${tenant.P}/agent-tasks?testRunId=${run.id}`)).body.data;
    expect(byRun).toHaveLength(2);
    await Bun.sleep(500);
    const hookCallIds = world.hooks.requests.map((r) => JSON.parse(r.body.toString()).callId);
    for (const t of byRun) expect(hookCallIds).not.toContain(t.callId);

    const junit = await fetch(`${world.api.url}${tenant.P}/test-runs/${run.id}/junit`, {
      headers: { authorization: `Bearer ${tenant.orgToken}` },
    });
    const xml = await junit.text();
    expect(xml).toContain('tests="2" failures="1" errors="0"');
    expect(xml).toContain('<failure message="ciao: no agent utterance matches /ciao/i"');
    expect(xml).toContain("caller: A table for two at seven.");
  }, 90_000);

  test("a judge that is down makes the result an error, never a pass", async () => {
    const { tenant } = world;
    world.chat.reply = scriptedReplies([{ text: "Sure." }]);
    world.chat.complete = null;
    const created = await helloRun({
      name: "judged",
      criteria: [{ name: "polite", type: "judge", question: "Was the agent polite?" }],
    });
    world.chat.mode = "error";
    const run = await untilEnded(created.body.data.id).finally(() => {
      world.chat.mode = "ok";
    });
    expect(run).toMatchObject({ verdict: "error", counts: { error: 1 } });
    const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${run.id}/results`)).body.data;
    expect(result.status).toBe("error");
    expect(result.criteria[0]).toMatchObject({ verdict: "error" });
  }, 90_000);

  // `(a+)+$` over a turn of a thousand a's and a b holds a backtracking engine for hours: the
  // worker's event loop, its heartbeats and every tenant's hook deliveries with it. Patterns are RE2.
  test("a catastrophic pattern is decided correctly, and another organization's hook emitted meanwhile is delivered", async () => {
    const { tenant } = world;
    world.chat.reply = scriptedReplies([{ text: "Noted." }]);
    const created = await tenant.org.post(`${tenant.P}/test-runs`, {
      assistantId,
      scenarios: [
        {
          name: "a caller who says a thousand a's",
          kind: "scripted",
          turns: [{ say: `${"a".repeat(1000)}b` }],
          criteria: [
            { name: "never ends on a's", type: "notSaid", pattern: "(a+)+$", by: "caller" },
            { name: "a's then b", type: "said", pattern: "^(a+)+b", by: "caller" },
            { name: "a's then c", type: "said", pattern: "(a+)+c", by: "caller", required: false },
          ],
        },
      ],
    });
    expect(created.status).toBe(202);
    const runId = created.body.data.id;
    // the run's call has ended, so its criteria are evaluated now; another tenant's call ends too
    await eventually(
      async () => {
        const tasks = (await tenant.org.get(`${tenant.P}/agent-tasks?testRunId=${runId}`)).body.data;
        return tasks.length === 1 && ["completed", "failed"].includes(tasks[0].status);
      },
      "the run's call to end",
      60_000,
    );
    const other = await createAssistantWithHooks(database.db, [{ url: `${otherOrgHooks.url}/hooks` }]);
    const event = callConcluded();
    await emitOne(database.db, { organizationId: other.organizationId, assistantId: other.assistantId, event });
    await eventually(
      () => otherOrgHooks.requests.some((r) => JSON.parse(r.body.toString()).callId === event.callId),
      "the other organization's hook",
      30_000,
    );
    const run = await untilEnded(runId, 30_000);
    expect(run.verdict).toBe("passed");
    const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${runId}/results`)).body.data;
    expect(result.criteria.map((c: { name: string; verdict: string }) => [c.name, c.verdict])).toEqual([
      ["never ends on a's", "pass"],
      ["a's then b", "pass"],
      ["a's then c", "fail"],
    ]);
  }, 120_000);
});

describe("a result whose activity gives up", () => {
  test("its error says what failed (the activity's own error), not Temporal's wrapper", async () => {
    const { tenant } = world;
    world.chat.reply = scriptedReplies([{ text: "Sure." }]);
    // the database refuses this scenario's outcome on every attempt, as a full disk would
    const { client: sql, close } = createDb(process.env.DATABASE_URL!, { max: 1 });
    await sql.unsafe(`
      create function refuse_outcome() returns trigger language plpgsql as $$
      begin
        if new.status in ('passed', 'failed')
          and (select scenarios->new.position->>'name' from test_runs where id = new.run_id) = 'refused' then
          raise exception 'no space left for the outcome';
        end if;
        return new;
      end $$;
      create trigger refuse_outcome before update on test_results for each row execute function refuse_outcome();`);
    try {
      const created = await helloRun({
        name: "refused",
        criteria: [{ name: "hung up", type: "endedReason", in: ["hangup"] }],
      });
      const run = await untilEnded(created.body.data.id);
      expect(run).toMatchObject({ verdict: "error", counts: { error: 1 } });
      const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${run.id}/results`)).body.data;
      expect(result.error).toBe("the test call could not be completed: PostgresError: no space left for the outcome");
    } finally {
      await sql.unsafe("drop trigger refuse_outcome on test_results; drop function refuse_outcome()");
      await close();
    }
  }, 90_000);
});

describe("cancel", () => {
  test("a call waiting out a tool mock's delay ends at once when its run is canceled", async () => {
    const { tenant } = world;
    world.chat.reply = scriptedReplies([{ toolCalls: [{ name: "book_table", arguments: { people: 2 } }] }]);
    const created = await tenant.org.post(`${tenant.P}/test-runs`, {
      assistantId,
      scenarios: [
        {
          name: "slow mock",
          kind: "scripted",
          turns: [{ say: "A table for two." }],
          toolMocks: [{ tool: "book_table", output: "booked", delayMs: 30_000 }],
          criteria: [{ name: "hung up", type: "endedReason", in: ["hangup"] }],
        },
      ],
    });
    const runId = created.body.data.id;
    // the call is up and its tool call waits on the mock
    let task: any;
    for (let i = 0; !task && i < 200; i++) {
      const tasks = (await tenant.org.get(`${tenant.P}/agent-tasks?testRunId=${runId}`)).body.data;
      task = tasks.find((t: { status: string }) => t.status === "active");
      if (!task) await Bun.sleep(100);
    }
    expect(task).toBeDefined();
    await Bun.sleep(1_000);
    const canceledAt = Date.now();
    expect((await tenant.org.post(`${tenant.P}/test-runs/${runId}/cancel`)).status).toBe(200);
    for (;;) {
      const now = (await tenant.org.get(`${tenant.P}/agent-tasks/${task.id}`)).body.data;
      if (now.status !== "active") break;
      // the contract: running calls end within 10 s of a cancel (the mock would hold it for 30 s)
      expect(Date.now() - canceledAt).toBeLessThan(10_000);
      await Bun.sleep(100);
    }
    expect((await untilEnded(runId)).status).toBe("canceled");
  }, 60_000);
});

describe("bun run test-assistant", () => {
  async function cli(args: string[]) {
    const { tenant } = world;
    const proc = Bun.spawn(
      ["bun", "src/cli/test-assistant.ts", "--api", `${world.api.url}${tenant.P}`, "--token", tenant.orgToken, ...args],
      { cwd: `${import.meta.dir}/../..`, stdout: "pipe", stderr: "pipe" },
    );
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { out, err, code };
  }
  const file = async (scenarios: unknown[]) => {
    const path = `${require("node:os").tmpdir()}/vas-tests-${process.pid}-${Math.random().toString(36).slice(2)}.json`;
    await Bun.write(path, JSON.stringify(scenarios));
    return path;
  };
  const hello = (criteria: unknown[]) => ({ name: "hello", kind: "scripted", turns: [{ say: "Hello?" }], criteria });

  test("exit 0 when the run passes, with progress, each result and the JUnit file", async () => {
    world.chat.reply = scriptedReplies([{ text: "Luigi's here, hello!" }]);
    const junit = `${require("node:os").tmpdir()}/vas-junit-${process.pid}.xml`;
    const tests = await file([hello([{ name: "greets", type: "said", pattern: "hello", by: "agent" }])]);
    const { out, code } = await cli(["--assistant", assistantId, "--file", tests, "--junit", junit]);
    expect(code).toBe(0);
    expect(out).toContain("passed hello #1");
    expect(out).toMatch(/1\/1 done \(1 passed/);
    expect(await Bun.file(junit).text()).toContain('tests="1" failures="0"');
  }, 90_000);

  test("exit 1 when it fails, 2 when the input is refused (naming the field)", async () => {
    world.chat.reply = scriptedReplies([{ text: "Hi." }]);
    const failing = await file([hello([{ name: "says ciao", type: "said", pattern: "ciao", by: "agent" }])]);
    expect((await cli(["--assistant", assistantId, "--file", failing])).code).toBe(1);
    const invalid = await file([hello([{ name: "x", type: "toolCalled", tool: "refund" }])]);
    const refused = await cli(["--assistant", assistantId, "--file", invalid]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("scenarios[0].criteria[0].tool");
    expect((await cli(["--assistant", assistantId])).code).toBe(2);
  }, 90_000);
});

describe("a worker that dies or stalls mid-run", () => {
  const runTasks = async (runId: string) =>
    (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?testRunId=${runId}&size=100`)).body.data as {
      id: string;
      callId: string;
      status: string;
    }[];
  const resultsOf = async (runId: string) =>
    (await world.tenant.org.get(`${world.tenant.P}/test-runs/${runId}/results`)).body.data as any[];
  const says = (i: number) => [1, 2, 3].map((t) => `Caller ${i} turn ${t}.`);

  /** A run of `count` three-turn callers whose replies are slow, so that calls are half-way when the worker goes. */
  async function slowRun(count: number, concurrency: number) {
    world.chat.reply = scriptedReplies([]); // echoes each turn: "You said: …"
    world.chat.complete = null;
    world.chat.firstTokenDelayMs = 400;
    const scenarios = Array.from({ length: count }, (_, i) => ({
      name: `caller ${i}`,
      kind: "scripted",
      turns: says(i).map((say) => ({ say })),
      criteria: [{ name: "heard the last turn", type: "said", pattern: `You said: Caller ${i} turn 3`, by: "agent" }],
    }));
    const created = await world.tenant.org.post(`${world.tenant.P}/test-runs`, { assistantId, scenarios, concurrency });
    expect(created.status).toBe(202);
    return { runId: created.body.data.id as string, names: scenarios.map((s) => s.name) };
  }

  /** Waits until a call of the run is live and at least `results` results are in (but not all). */
  async function untilMidRun(runId: string, results: number, total: number) {
    for (const until = Date.now() + 60_000; ; ) {
      const inSoFar = (await resultsOf(runId)).length;
      const live = (await runTasks(runId)).filter((t) => t.status === "active");
      if (inSoFar >= results && inSoFar < total && live.length >= 1) return;
      if (Date.now() > until || inSoFar === total) throw new Error(`no moment mid-run: ${inSoFar} in`);
      await Bun.sleep(50);
    }
  }

  /** Each passed result is one whole call of its own: its turns once each, its own hooks once each. */
  async function expectOneCallEach(runId: string, results: any[]) {
    for (const [i, result] of results.entries()) {
      if (result.status !== "passed") continue;
      const task = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${result.agentTaskId}`)).body.data;
      expect(task).toMatchObject({ testRunId: runId, status: "completed" });
      const callerSaid = task.messages.filter((m: { role: string }) => m.role === "USER").map((m: any) => m.text);
      expect(callerSaid).toEqual(says(i));
      expect(result.hooks.map((h: { type: string }) => h.type).sort()).toEqual(["call_concluded", "call_started"]);
      for (const hook of result.hooks) expect(hook.callId).toBe(task.callId);
    }
  }

  test("SIGKILL while calls run: a new worker finishes the run, every result final once, none lost", async () => {
    const { runId, names } = await slowRun(6, 3);
    let before: any[] = [];
    let placedByTheDead: string[] = [];
    let run: any;
    try {
      await untilMidRun(runId, 1, 6);
      await worker.kill("SIGKILL");
      // what the dead worker left, read before a new one can change anything
      before = await resultsOf(runId);
      placedByTheDead = (await runTasks(runId)).map((t) => t.id);
      await worker.restart();
      // Temporal notices the dead worker's activities once their heartbeats stop (30 s)
      run = await untilEnded(runId, 150_000);
    } finally {
      world.chat.firstTokenDelayMs = 0;
    }
    expect(run).toMatchObject({
      status: "completed",
      verdict: "passed",
      counts: { total: 6, passed: 6, failed: 0, error: 0, pending: 0 },
    });
    const results = await resultsOf(runId);
    expect(results.map((r) => r.scenarioName)).toEqual(names);
    // a result that was in before the kill was not run again
    expect(before.length).toBeGreaterThanOrEqual(1);
    for (const done of before) expect(results.find((r) => r.id === done.id)).toEqual(done);
    await expectOneCallEach(runId, results);
    // the calls the dead worker left ended and belong to no result; nothing of the run is still live
    const tasks = await runTasks(runId);
    const resultTasks = new Set(results.map((r) => r.agentTaskId));
    const interrupted = tasks.filter((t) => !resultTasks.has(t.id));
    expect(interrupted.length).toBeGreaterThanOrEqual(1);
    for (const t of interrupted) expect(placedByTheDead).toContain(t.id);
    expect(tasks.filter((t) => t.status === "active" || t.status === "offered")).toEqual([]);
  }, 240_000);

  test("a worker that stalls past its heartbeat and wakes up cannot overwrite the results its successor decided", async () => {
    const { runId, names } = await slowRun(2, 2);
    let stalled = 0;
    let run: any;
    let decided: any[] = [];
    let storedByTheStalled: Record<string, unknown>[] = [];
    try {
      await untilMidRun(runId, 0, 2);
      stalled = worker.pid()!;
      process.kill(stalled, "SIGSTOP");
      const left = 2 - (await resultsOf(runId)).length;
      await worker.restart();
      run = await untilEnded(runId, 150_000);
      decided = await resultsOf(runId);
      // the stalled worker goes on with its calls and tries to store their outcomes
      const mark = worker.lines.length;
      process.kill(stalled, "SIGCONT");
      for (const until = Date.now() + 60_000; storedByTheStalled.length < left; ) {
        if (Date.now() > until)
          throw new Error(`the stalled worker ended nothing: ${JSON.stringify(worker.lines.slice(-5))}`);
        await Bun.sleep(100);
        storedByTheStalled = worker.lines.slice(mark).filter((l) => String(l.msg).startsWith("test result"));
      }
    } finally {
      world.chat.firstTokenDelayMs = 0;
      if (stalled) process.kill(stalled, "SIGKILL");
    }
    // the stalled worker's open polls may swallow a retry too: a result may then run out of attempts
    // (an error, as the contract allows); what matters here is that nothing is decided twice
    expect(run).toMatchObject({ status: "completed", counts: { total: 2, pending: 0, failed: 0 } });
    expect(decided.map((r) => r.scenarioName)).toEqual(names);
    expect(await resultsOf(runId)).toEqual(decided);
    expect((await world.tenant.org.get(`${world.tenant.P}/test-runs/${runId}`)).body.data).toEqual(run);
    for (const r of decided.filter((r) => r.status !== "passed"))
      expect(r.error).toStartWith("the test call could not be completed");
    await expectOneCallEach(runId, decided);
    for (const line of storedByTheStalled) expect(line.msg).toBe("test result of a superseded attempt dropped");
  }, 240_000);
});
