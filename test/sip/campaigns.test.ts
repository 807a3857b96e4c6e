// Campaigns end to end: P/campaigns creates contacts in Postgres and starts the campaign's Temporal
// workflow (a real worker), which offers each contact's call through the same path as POST P/calls;
// the bridge dials through Kamailio (407 digest on every INVITE) to SIPp UASes per number: answer,
// busy, decline. Retries, pause / resume / cancel, calling hours, the concurrency window within the
// credential's free capacity, a worker killed mid-campaign, CSV and bad input.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { connectTemporal } from "../../src/temporal/client";
import { campaignWorkflowId } from "../../workflows/ids";
import { ensureTemporal, freePort } from "../helpers/temporal";
import { startRtpPeer, type RtpPeer } from "./helpers/rtp-peer";
import { eventually, startSipWorld, type SipWorld } from "./helpers/sip-world";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";

let world: SipWorld;
let assistantId: string;
let numberId: string;
let peer: RtpPeer;
const callees = ["answer", "busy", "decline"] as const;
const port: Record<(typeof callees)[number], number> = {} as never;
const number: Record<(typeof callees)[number], string> = {} as never;
const unknown = "+15550419999";

beforeAll(async () => {
  world = await startSipWorld({ nobody: "unused" }, {});
  const dids: Record<string, string> = {};
  for (const [i, name] of callees.entries()) {
    port[name] = await freePort();
    number[name] = `+155504100${i}0`;
    dids[number[name].slice(1)] = `127.0.0.1:${port[name]}`;
  }
  // 3 slots, 1 of them kept for inbound calls: a campaign gets 2 however many it asks for
  ({ numberId } = await world.registeredCredential({
    user: "camp",
    dids,
    number: "+15550410999",
    bridge: "camp",
    maxAgentTasks: 3,
  }));
  assistantId = (await world.createAssistant({ numberId, greeting: "Hi {{first_name}}." })).id;
  // the callees' media: one peer behind every answering UAS, streaming to each call's bridge port, so no
  // call goes without the callee's RTP into the bridge's 4 s media time-out (then "failed" and retried)
  peer = await startRtpPeer("PCMU", "127.0.0.1", true);
}, 90_000);
afterAll(async () => {
  peer?.stop();
  await world?.stop();
});

const P = () => world.tenant.P;
const org = () => world.tenant.org;
const create = (body: Record<string, unknown>) =>
  org().post(`${P()}/campaigns`, { name: "reminders", assistantId, reservedInboundSlots: 1, ...body });
const campaign = async (id: string) => (await org().get(`${P()}/campaigns/${id}`)).body.data;
const contacts = async (id: string) => (await org().get(`${P()}/campaigns/${id}/contacts?size=100`)).body.data as any[];
const finished = (id: string, timeoutMs = 60_000) =>
  eventually(
    async () => {
      const c = await campaign(id);
      return c.status === "completed" || (c.status === "canceled" && c.counts.dialing + c.counts.inProgress === 0)
        ? c
        : null;
    },
    "the campaign to finish",
    timeoutMs,
  );
const campaignTasks = async (id: string) => world.tasks((t) => t.campaignId === id);
/** The names of the signals the campaign's workflow received (its latest run: small campaigns have one). */
async function signalsOf(id: string) {
  const { address } = await ensureTemporal();
  const temporal = await connectTemporal(loadConfig({ ...process.env, TEMPORAL_ADDRESS: address }));
  try {
    const history = await temporal.client.workflow.getHandle(campaignWorkflowId(id)).fetchHistory();
    return (history.events ?? []).flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? []);
  } finally {
    await temporal.close();
  }
}
/** The most calls of the campaign that held a slot (offered to ended) at the same moment. */
function maxOverlap(tasks: any[]) {
  const edges = tasks.flatMap((t) => [
    [new Date(t.createdAt).getTime(), 1],
    [new Date(t.endedAt ?? Date.now()).getTime(), -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) {
    open += step!;
    most = Math.max(most, open);
  }
  return most;
}
const answering = (calls: number, talkMs = 1500) =>
  startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.byeAfter(talkMs) },
    port.answer,
    calls,
  );

// the first two run at once (test.concurrent): a campaign outside its calling hours dials nobody, so
// takes none of the other's slots, and waits out a fixed 4 s
test.concurrent("a campaign completes: every contact called once with its variables, never more calls at once than the credential's free capacity less the inbound reserve", async () => {
  const uas = await answering(4);
  const created = await create({
    maxConcurrentCalls: 5,
    contacts: ["Ada", "Bo", "Cy", "Di"].map((first_name) => ({ to: number.answer, variables: { first_name } })),
  });
  expect(created.status).toBe(201);
  expect(created.body.data).toMatchObject({ status: "running", maxConcurrentCalls: 5, counts: { total: 4 } });
  expect(created.body.data.contacts).toBeUndefined();
  const done = await finished(created.body.data.id);
  expect(done.counts).toMatchObject({ total: 4, completed: 4, pending: 0, failed: 0 });
  const list = await contacts(done.id);
  expect(list.map((c) => [c.status, c.attempts, c.lastEndedReason, c.agentTaskIds.length])).toEqual(
    Array(4).fill(["completed", 1, "hangup", 1]),
  );
  const tasks = await campaignTasks(done.id);
  expect(tasks).toHaveLength(4);
  expect(new Set(tasks.map((t) => t.variables.first_name))).toEqual(new Set(["Ada", "Bo", "Cy", "Di"]));
  // 3 slots, 1 reserved: two at a time, although the campaign asked for 5
  expect(maxOverlap(tasks)).toBe(2);
  expect((await uas.result).code).toBe(0);
  // each call's end woke the workflow (workers/campaign-call-ends.ts), not only its own poll
  const signals = await signalsOf(done.id);
  expect(signals[0]).toBe("created");
  expect(signals.filter((n) => n === "call-ended").length).toBeGreaterThanOrEqual(1);
}, 90_000);

test.concurrent("outside its calling hours a campaign waits: nobody is dialled", async () => {
  const minute = new Date().getUTCHours() * 60 + new Date().getUTCMinutes();
  const window = minute < 600 ? { start: "14:00", end: "15:00" } : { start: "02:00", end: "03:00" };
  const created = await create({
    schedule: { timezone: "UTC", windows: [{ days: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"], ...window }] },
    contacts: [{ to: number.answer }],
  });
  expect(created.status).toBe(201);
  await Bun.sleep(4000);
  const waiting = await campaign(created.body.data.id);
  expect(waiting).toMatchObject({ status: "running", counts: { pending: 1, dialing: 0 } });
  expect(await campaignTasks(waiting.id)).toHaveLength(0);
  await org().post(`${P()}/campaigns/${waiting.id}/cancel`);
}, 30_000);

test("busy is retried up to maxAttempts; declined is never retried", async () => {
  const busy = await startSippUas("uas-reject.xml", { STATUS: 486, REASON: "Busy Here" }, port.busy, 2);
  const decline = await startSippUas("uas-reject.xml", { STATUS: 603, REASON: "Decline" }, port.decline, 2);
  const created = await create({
    maxConcurrentCalls: 2,
    retry: { maxAttempts: 2, onReasons: ["busy", "no-answer", "failed"], delayMinutes: 0 },
    contacts: [{ to: number.busy }, { to: number.decline }],
  });
  expect(created.status).toBe(201);
  const done = await finished(created.body.data.id);
  expect(done.counts).toMatchObject({ total: 2, busy: 1, failed: 1 });
  const [b, d] = await contacts(done.id);
  expect(b).toMatchObject({ status: "busy", attempts: 2, lastEndedReason: "busy" });
  expect(b.agentTaskIds).toHaveLength(2);
  expect(d).toMatchObject({ status: "failed", attempts: 1, lastEndedReason: "declined" });
  expect((await busy.result).code).toBe(0);
  decline.stop(); // it was called once and waits for a second call that never comes
  expect((await campaignTasks(done.id)).filter((t) => t.endedReason === "declined")).toHaveLength(1);
}, 90_000);

test("pause stops new dials, resume goes on, cancel stops them for good while the live call finishes", async () => {
  const uas = await answering(3, 3000);
  const created = await create({ maxConcurrentCalls: 1, contacts: Array(5).fill({ to: number.answer }) });
  const id = created.body.data.id;
  const paused = await org().post(`${P()}/campaigns/${id}/pause`);
  expect(paused.status).toBe(200);
  expect(paused.body.data.status).toBe("paused");
  await Bun.sleep(4000);
  // at most the one call claimed before the pause landed
  const whilePaused = await contacts(id);
  expect(whilePaused.filter((c) => c.attempts > 0).length).toBeLessThanOrEqual(1);
  const resumed = await org().post(`${P()}/campaigns/${id}/resume`);
  expect(resumed.body.data.status).toBe("running");
  await eventually(
    async () => (await contacts(id)).filter((c) => c.attempts > 0).length >= 2,
    "dials after resume",
    20_000,
  );
  const canceled = await org().post(`${P()}/campaigns/${id}/cancel`);
  expect(canceled.body.data.status).toBe("canceled");
  const done = await finished(id);
  const list = await contacts(id);
  const called = list.filter((c) => c.attempts > 0);
  expect(called.length).toBeLessThanOrEqual(3);
  expect(list.filter((c) => c.status === "canceled").length).toBe(5 - called.length);
  // the call live at the cancel was not cut: it ended by the callee's BYE
  expect(called.every((c) => c.lastEndedReason === "hangup")).toBe(true);
  expect(done.counts.canceled).toBe(5 - called.length);
  expect((await org().post(`${P()}/campaigns/${id}/resume`)).status).toBe(409);
  uas.stop();
}, 90_000);

test("a worker killed mid-campaign loses no contact and dials nobody twice", async () => {
  const uas = await answering(6, 2500);
  const created = await create({ maxConcurrentCalls: 2, contacts: Array(6).fill({ to: number.answer }) });
  const id = created.body.data.id;
  await eventually(async () => (await contacts(id)).some((c) => c.attempts > 0), "the first dial", 20_000);
  expect(await world.worker.kill("SIGKILL")).not.toBe(0);
  await Bun.sleep(2000);
  await world.worker.restart();
  const done = await finished(id, 90_000);
  expect(done.counts).toMatchObject({ total: 6, completed: 6 });
  const list = await contacts(id);
  expect(list.every((c) => c.attempts === 1 && c.agentTaskIds.length === 1)).toBe(true);
  const tasks = await campaignTasks(id);
  expect(tasks).toHaveLength(6);
  expect(maxOverlap(tasks)).toBeLessThanOrEqual(2);
  expect((await uas.result).code).toBe(0);
}, 150_000);

test("contacts as CSV; bad CSV and bad fields are 400s naming the field; Idempotency-Key answers a retry with the same campaign", async () => {
  const csv = `to,first_name,note\n${unknown},"Ada, Jr.","said ""call later"""\n${unknown},Bo,\n`;
  const query = new URLSearchParams({
    name: "csv",
    assistantId,
    maxConcurrentCalls: "2",
    retry: JSON.stringify({ maxAttempts: 3 }),
  });
  const up = await org().post(`${P()}/campaigns?${query}`, csv, { "content-type": "text/csv" });
  expect(up.status).toBe(201);
  expect(up.body.data).toMatchObject({
    name: "csv",
    maxConcurrentCalls: 2,
    retry: { maxAttempts: 3 },
    counts: { total: 2 },
  });
  const list = await contacts(up.body.data.id);
  expect(list.map((c) => c.variables)).toEqual([
    { first_name: "Ada, Jr.", note: 'said "call later"' },
    { first_name: "Bo", note: "" },
  ]);
  // an unknown number is unreachable: never retried
  const done = await finished(up.body.data.id);
  expect(done.counts).toMatchObject({ failed: 2 });
  expect((await contacts(done.id)).map((c) => [c.attempts, c.lastEndedReason])).toEqual([
    [1, "unreachable"],
    [1, "unreachable"],
  ]);

  const field = async (res: Promise<{ status: number; body: any }>) => {
    const r = await res;
    expect(r.status).toBe(400);
    return r.body.errors?.[0]?.field;
  };
  const csvPost = (text: string, q = query) =>
    org().post(`${P()}/campaigns?${q}`, text, { "content-type": "text/csv" });
  expect(await field(csvPost(`to,name\n"${unknown},x\n`))).toBe("contacts");
  expect(await field(csvPost(`number,name\n${unknown},x\n`))).toBe("contacts");
  expect(await field(csvPost(`to\n`))).toBe("contacts");
  expect(await field(csvPost(`to\nnot-a-number\n`))).toBe("contacts[0].to");
  expect(await field(csvPost(`to\n${unknown}\n`, new URLSearchParams({ name: "x", assistantId, retry: "{" })))).toBe(
    "retry",
  );
  const ok = { contacts: [{ to: unknown }] };
  expect(await field(create({ ...ok, contacts: [{ to: unknown }, { to: "sip:x@10.0.0.1" }] }))).toBe("contacts[1].to");
  expect(await field(create({ ...ok, maxConcurrentCalls: 101 }))).toBe("maxConcurrentCalls");
  expect(await field(create({ ...ok, contacts: [] }))).toBe("contacts");
  expect(await field(create({ ...ok, retry: { onReasons: ["declined"] } }))).toBe("retry.onReasons[0]");
  expect(await field(create({ ...ok, retry: { delayMinutes: 1441 } }))).toBe("retry.delayMinutes");
  const schedule = (w: object, timezone = "Europe/Berlin") => ({
    ...ok,
    schedule: { timezone, windows: [{ days: ["mon"], start: "09:00", end: "17:00", ...w }] },
  });
  expect(await field(create(schedule({ start: "17:00", end: "09:00" })))).toBe("schedule.windows[0].end");
  expect(await field(create(schedule({}, "Mars/Olympus")))).toBe("schedule.timezone");
  expect(await field(create(schedule({ days: ["monday"] })))).toBe("schedule.windows[0].days[0]");
  expect(await field(create(schedule({ start: "9am" })))).toBe("schedule.windows[0].start");

  const key = { "idempotency-key": `campaign-${Date.now()}` };
  const body = { name: "once", assistantId, contacts: [{ to: unknown }] };
  const first = await org().post(`${P()}/campaigns`, body, key);
  const again = await org().post(`${P()}/campaigns`, body, key);
  expect(first.status).toBe(201);
  expect(again.status).toBe(201);
  expect(again.body.data.id).toBe(first.body.data.id);
  const named = (await org().get(`${P()}/campaigns?size=100`)).body.data.filter((c: any) => c.name === "once");
  expect(named).toHaveLength(1);
}, 90_000);

// last: the number's assistant is replaced (one per number)
test("a callee who stays quiet through the idle prompts: the call ends silence-timeout, the contact completed, not retried", async () => {
  const quiet = await world.createAssistant({
    numberId,
    greeting: "Hi.",
    extensions: [
      { type: "turn_taking", parameters: { idle: { timeoutMs: 1000, maxPrompts: 0, hangupAfterMs: 1000 } } },
    ],
  });
  // the callee sends silence (the shared peer): the call ends by the idle hang-up, not the media time-out
  const uas = await startSippUas(
    "uas-answer.xml",
    { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.awaitBye },
    port.answer,
    1,
  );
  const created = await org().post(`${P()}/campaigns`, {
    name: "quiet",
    assistantId: quiet.id,
    reservedInboundSlots: 1,
    retry: { maxAttempts: 2, onReasons: ["busy", "no-answer", "failed"], delayMinutes: 0 },
    contacts: [{ to: number.answer }],
  });
  expect(created.status).toBe(201);
  const done = await finished(created.body.data.id);
  expect(done.counts).toMatchObject({ total: 1, completed: 1 });
  const [contact] = await contacts(done.id);
  expect(contact).toMatchObject({ status: "completed", attempts: 1, lastEndedReason: "silence-timeout" });
  expect((await campaignTasks(done.id)).map((t) => [t.status, t.endedReason])).toEqual([
    ["completed", "silence-timeout"],
  ]);
  expect((await uas.result).code).toBe(0);
}, 90_000);
