// bench/calls-out (by hand, not CI): outbound calls and campaigns through Kamailio as the trunk (a 407
// digest challenge on every INVITE). Reports: POST P/calls to the INVITE reaching the callee (p50/p99,
// a script UAS on a UDP socket here that answers 486), answer to greeting (a SIPp callee that answers and
// stays silent, its RTP on a socket here), the dial rate a campaign sustains with
// maxConcurrentCalls 100 against a SIPp UAS (486 after --ring-ms, 3 s: is the window kept full; then after
// 200 ms: the most this machine dials), and a large campaign (default 10,000
// contacts, numbers the trunk answers 404 at once): its wall time, Postgres rows and bytes, Temporal
// history events per contact, and the memory of this process (API and bridge) and of the worker.
// For both campaigns, the workflow's steps and wake signals, and how long a step takes against how
// long the workflow waits between steps: which of the two bounds the dial rate.
//   bun run bench calls-out [--posts 200] [--greetings 20] [--rate-contacts 2000] [--ring-ms 3000] [--ceiling-contacts 1000] [--contacts 10000]
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { connectTemporal } from "../../src/temporal/client";
import { loadConfig } from "../../src/config";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench, percentile as pct } from "../lib/harness";
import { startScriptUas } from "../lib/script-uas";
import { runsWorker } from "../../src/temporal/worker-build";
import { ensureTemporal, freePort } from "../../test/helpers/temporal";
import { eventually, startSipWorld } from "../../test/sip/helpers/sip-world";
import { startSippUas, uasEnding } from "../../test/sip/helpers/sipp-uas";
import { startRtpPeer } from "../../test/sip/helpers/rtp-peer";
import { speech } from "../../test/helpers/speech";
import { muLawDecode } from "../../src/audio/g711";
import { rms } from "../../src/audio/pcm";
import { campaignWorkflowId } from "../../workflows/ids";

const { values } = parseArgs({
  options: {
    posts: { type: "string", default: "200" },
    greetings: { type: "string", default: "20" },
    "rate-contacts": { type: "string", default: "2000" },
    "ring-ms": { type: "string", default: "3000" },
    "ceiling-contacts": { type: "string", default: "1000" },
    contacts: { type: "string", default: "10000" },
  },
});
const { say, databaseUrl, finish } = createBench("calls-out");
await migrateDatabase(databaseUrl);
const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(execFileSync("cat", [`/proc/${pid}/status`]).toString())?.[1] ?? 0) / 1024;
/** The worker is this process's `node … workers/main.ts` child (or its build, src/temporal/worker-build.ts). */
const workerPid = () =>
  Number(
    execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)])
      .toString()
      .split("\n")
      .find(runsWorker)
      ?.trim()
      .split(/\s+/)[0] ?? 0,
  );

/**
 * A campaign's workflow histories: events, runs, steps (one local activity each), call-ended signals,
 * and p50 of a workflow task's time (the step itself) and of the wait between two steps.
 */
async function historyOf(campaignId: string) {
  const { address } = await ensureTemporal();
  const temporal = await connectTemporal(loadConfig({ ...process.env, TEMPORAL_ADDRESS: address }));
  const h = { events: 0, runs: 0, steps: 0, wakes: 0, taskMs: [] as number[], waitMs: [] as number[] };
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  try {
    const query = `WorkflowId = "${campaignWorkflowId(campaignId)}"`;
    for await (const run of temporal.client.workflow.list({ query })) {
      h.runs++;
      const history = await temporal.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      let started = 0;
      let completed = 0;
      for (const e of history.events ?? []) {
        h.events++;
        const at = ms(e.eventTime);
        if (e.markerRecordedEventAttributes) h.steps++;
        if (e.workflowExecutionSignaledEventAttributes?.signalName === "call-ended") h.wakes++;
        if (e.workflowTaskStartedEventAttributes) {
          if (completed) h.waitMs.push(at - completed);
          started = at;
        }
        if (e.workflowTaskCompletedEventAttributes) {
          h.taskMs.push(at - started);
          completed = at;
        }
      }
    }
  } finally {
    await temporal.close();
  }
  return h;
}
const historyText = (h: Awaited<ReturnType<typeof historyOf>>, contacts: number) =>
  `${h.events} events in ${h.runs} runs (${(h.events / contacts).toFixed(3)} per contact): ${h.steps} steps, ` +
  `${h.wakes} call-ended signals; workflow task p50 ${pct(h.taskMs, 50).toFixed(0)} ms, wait between tasks p50 ${pct(h.waitMs, 50).toFixed(0)} ms`;

const world = await startSipWorld({ nobody: "unused" }, {});
try {
  const uas = await startScriptUas();
  const sippPort = await freePort();
  const answerPort = await freePort();
  const dids = {
    "15550500001": `127.0.0.1:${uas.port}`,
    "15550500002": `127.0.0.1:${sippPort}`,
    "15550500003": `127.0.0.1:${answerPort}`,
  };
  const { numberId } = await world.registeredCredential({
    user: "bench",
    dids,
    number: "+15550500999",
    bridge: "bench",
    maxAgentTasks: 150,
  });
  // the fake provider speaks the greeting when asked to (the callee stays silent: after 2 s of silence)
  const greeting = "Hello, this is Acme calling about your order.";
  const greetingAudio = await speech(greeting, 24000);
  const { id: assistantId } = await world.createAssistant({
    numberId,
    greeting,
    fake: { onInstructions: () => ({ text: greeting, audio: greetingAudio }) },
  });
  const { org, P } = world.tenant;

  say(`POST P/calls → INVITE at the callee, ${values.posts} calls one after another`);
  const postToInvite: number[] = [];
  const postParts = { api: [] as number[], claim: [] as number[], invite: [] as number[] };
  for (let i = 0; i < Number(values.posts); i++) {
    const seen = uas.arrivals.length;
    const t0 = performance.now();
    const res = await org.post(`${P}/calls`, { assistantId, to: "+15550500001" });
    if (res.status !== 201) throw new Error(`POST P/calls: ${res.status} ${JSON.stringify(res.body)}`);
    await eventually(() => uas.arrivals.length > seen, "the INVITE", 10_000);
    postToInvite.push(uas.arrivals[seen]! - t0);
    // its parts, by the task's own times (Postgres's clock, the same machine's): the API until the task
    // is committed, the bridge until it has claimed it, then the INVITE through the trunk's 407
    const [task] = await sql`select extract(epoch from created_at) * 1000 as offered,
      extract(epoch from (dial->>'claimedAt')::timestamptz) * 1000 as claimed from agent_tasks where id = ${res.body.data.id}`;
    const wall = (at: number) => performance.timeOrigin + at;
    postParts.api.push(Number(task!.offered) - wall(t0));
    postParts.claim.push(Number(task!.claimed) - Number(task!.offered));
    postParts.invite.push(wall(uas.arrivals[seen]!) - Number(task!.claimed));
    // the next call once this one's slot is free, so that every POST meets an idle bridge
    await eventually(async () => (await org.get(`${P}/agent-tasks/${res.body.data.id}`)).body.data.endedAt, "the end");
  }

  say(
    `answer → greeting: ${values.greetings} calls, one after another, to a SIPp callee that answers and says nothing`,
  );
  // from the bridge's first RTP packet (it starts sending at the 200 OK) to the first frame of speech
  const answerToGreeting: number[] = [];
  for (let i = 0; i < Number(values.greetings); i++) {
    const peer = await startRtpPeer("PCMU");
    const callee = await startSippUas(
      "uas-answer.xml",
      { RTP_PORT: peer.port, RING_MS: 100, ENDING: uasEnding.byeAfter(3500) },
      answerPort,
    );
    const res = await org.post(`${P}/calls`, { assistantId, to: "+15550500003" });
    if (res.status !== 201) throw new Error(`POST P/calls: ${res.status} ${JSON.stringify(res.body)}`);
    const spoken = await eventually(
      () => peer.received.find((r) => r.payloadType === 0 && rms(muLawDecode(r.payload)) > 300),
      "the greeting",
      15_000,
    );
    answerToGreeting.push(spoken.at - peer.received[0]!.at);
    await callee.result;
    peer.stop();
  }

  const runCampaign = async (name: string, to: string, count: number) => {
    const t0 = performance.now();
    const res = await org.post(`${P}/campaigns`, {
      name,
      assistantId,
      maxConcurrentCalls: 100,
      retry: { maxAttempts: 1 },
      contacts: Array.from({ length: count }, () => ({ to })),
    });
    if (res.status !== 201) throw new Error(`POST P/campaigns: ${res.status} ${JSON.stringify(res.body)}`);
    const createdMs = performance.now() - t0;
    const id = res.body.data.id as string;
    let last = 0;
    const done = await eventually(
      async () => {
        const c = (await org.get(`${P}/campaigns/${id}`)).body.data;
        if (!c) return null; // an error answer under load: look again
        const called = c.counts.total - c.counts.pending;
        if (called - last >= count / 10) {
          last = called;
          say(`  ${name}: ${called}/${count} called`);
        }
        return c.status === "completed" ? c : null;
      },
      `campaign ${name}`,
      30 * 60_000,
    );
    // where a call's time goes (offered → claimed by the bridge → ended), and how full the window was on
    // average: the sum of the calls' durations over the span (100 = always at maxConcurrentCalls)
    const [span] = await sql`select extract(epoch from max(ended_at) - min(created_at)) * 1000 as ms,
      sum(extract(epoch from ended_at - created_at)) * 1000 as busy_ms,
      percentile_cont(0.5) within group (order by extract(epoch from (dial->>'claimedAt')::timestamptz - created_at) * 1000) as claim_p50,
      percentile_cont(0.5) within group (order by extract(epoch from ended_at - (dial->>'claimedAt')::timestamptz) * 1000) as call_p50
      from agent_tasks where campaign_id = ${id}`;
    const dialMs = Number(span!.ms);
    const phases = `offered → claimed p50 ${Number(span!.claim_p50).toFixed(0)} ms, claimed → ended p50 ${Number(span!.call_p50).toFixed(0)} ms, mean calls in flight ${(Number(span!.busy_ms) / dialMs).toFixed(1)}`;
    return { id, done, createdMs, dialMs, phases };
  };

  // the same SIPp callee, ringing RING_MS before its 486: calls of a few seconds show whether the
  // window stays full (bound by the cap); calls of 200 ms show the most this machine dials (our ceiling)
  const dialRate = async (name: string, count: number, ringMs: number) => {
    say(`dial rate (${name}): ${count} contacts, maxConcurrentCalls 100, SIPp answering 486 after ${ringMs} ms`);
    const sipp = await startSippUas(
      "uas-reject.xml",
      { STATUS: 486, REASON: "Busy Here", RING_MS: ringMs },
      sippPort,
      count,
    );
    const run = await runCampaign(name, "+15550500002", count);
    sipp.stop();

    return { ...run, count, ringMs };
  };
  const capBound = await dialRate("cap", Number(values["rate-contacts"]), Number(values["ring-ms"]));
  const rate = await dialRate("ceiling", Number(values["ceiling-contacts"]), 200);

  const bigCount = Number(values.contacts);
  say(`large campaign: ${bigCount} contacts to a number the trunk answers 404`);
  const rssBefore = { api: rssMb(process.pid), worker: rssMb(workerPid()) };
  let rssPeak = { ...rssBefore };
  const sampler = setInterval(() => {
    rssPeak = { api: Math.max(rssPeak.api, rssMb(process.pid)), worker: Math.max(rssPeak.worker, rssMb(workerPid())) };
  }, 1000);
  const big = await runCampaign("large", "+15550509999", bigCount);
  clearInterval(sampler);
  const [rows] = await sql`select
    (select count(*) from campaign_contacts where campaign_id = ${big.id})::int as contacts,
    (select count(*) from agent_tasks where campaign_id = ${big.id})::int as tasks,
    pg_total_relation_size('campaign_contacts') as contact_bytes`;
  const [rateHistory, bigHistory] = [await historyOf(rate.id), await historyOf(big.id)];

  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`
| measure | value |
|---|---|
| POST P/calls → INVITE at the callee (through the trunk's 407), p50 / p99 | ${ms(pct(postToInvite, 50))} / ${ms(pct(postToInvite, 99))} (n=${postToInvite.length}) |
| of which: POST to the task offered / offered to claimed by the bridge / claimed to INVITE at the callee, p50 (p99) | ${(["api", "claim", "invite"] as const).map((k) => `${ms(pct(postParts[k], 50))} (${ms(pct(postParts[k], 99))})`).join(" / ")} |
| answer → greeting, the callee silent (the bridge's first RTP packet → the first frame of speech; 2,000 ms of it is the designed wait for the callee to speak first), p50 / p99 | ${ms(pct(answerToGreeting, 50))} / ${ms(pct(answerToGreeting, 99))} (n=${answerToGreeting.length}) |
${[capBound, rate].map((r) => `| dial rate, maxConcurrentCalls 100, 486 after ${r.ringMs} ms | ${((r.count * 1000) / r.dialMs).toFixed(1)} calls/s (${r.count} in ${(r.dialMs / 1000).toFixed(1)} s); ${r.phases} |`).join("\n")}
| large campaign: create (${bigCount} contacts, JSON) | ${ms(big.createdMs)} |
| large campaign: first offer to last end | ${(big.dialMs / 1000).toFixed(1)} s (${((bigCount * 1000) / big.dialMs).toFixed(1)} calls/s) |
| large campaign: rows | ${rows!.contacts} campaign_contacts, ${rows!.tasks} agent_tasks |
| campaign_contacts on disk (all campaigns of the run, indexes included) | ${(Number(rows!.contact_bytes) / 1024 / 1024).toFixed(1)} MB |
| Temporal history, dial-rate campaign (486 after 200 ms) | ${historyText(rateHistory, rate.count)} |
| Temporal history, large campaign | ${historyText(bigHistory, bigCount)} |
| RSS API + bridge (this process), before / peak | ${rssBefore.api.toFixed(0)} / ${rssPeak.api.toFixed(0)} MB |
| RSS worker, before / peak | ${rssBefore.worker.toFixed(0)} / ${rssPeak.worker.toFixed(0)} MB |
`);
  uas.close();
} finally {
  await world.stop();
  await sql.end();
}
await finish();
