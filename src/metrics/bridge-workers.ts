// Bridge workers (BRIDGE_WORKERS > 1) share BRIDGE_PORT, so a scrape of GET /metrics lands on any one
// of them. That worker asks the supervisor, which collects every live worker's metrics over IPC and
// merges them with prom-client's aggregator (counters, histograms and gauges summed), so one scrape
// sees the whole bridge.
import type { Subprocess } from "bun";
import { AggregatorRegistry, Gauge } from "prom-client";
import { registry } from "./metrics";
import { metricsResponse } from "./serve";

type Metrics = Awaited<ReturnType<typeof registry.getMetricsAsJSON>>;
type Message =
  | { type: "metrics:request"; id: number }
  | { type: "metrics:collect"; id: number }
  | { type: "metrics:collected"; id: number; metrics: Metrics }
  | { type: "metrics:aggregated"; id: number; text: string };

// a worker that does not answer in time is left out of that scrape rather than failing it
const collectTimeoutMs = 2_000;

new Gauge({
  name: "vas_bridge_processes",
  help: "bridge processes in this scrape (BRIDGE_WORKERS when every worker answered)",
  registers: [registry],
}).set(1);

const isMessage = (m: unknown): m is Message =>
  typeof m === "object" && m !== null && String((m as Message).type).startsWith("metrics:");

let answering = false;
let nextRequest = 0;
const waiting = new Map<number, (text: string | null) => void>();

/** GET /metrics of a bridge process; a worker under the supervisor answers for all workers. */
export function bridgeMetricsResponse(): Promise<Response> {
  if (!answering) return metricsResponse();
  const id = ++nextRequest;
  return new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), collectTimeoutMs * 2);
    waiting.set(id, (text) => {
      clearTimeout(timer);
      resolve(text);
    });
    process.send!({ type: "metrics:request", id } satisfies Message);
  }).then((text) => {
    waiting.delete(id);
    // no answer from the supervisor: this worker's own metrics are better than none
    return text === null
      ? metricsResponse()
      : new Response(text, { headers: { "content-type": registry.contentType } });
  });
}

/** In a worker under the supervisor: answers its collection requests, and scrapes go through it. */
export function answerMetricsCollection() {
  if (answering || !process.send) return;
  answering = true;
  process.on("message", (m: unknown) => void onSupervisorMessage(m));
}

async function onSupervisorMessage(m: unknown) {
  if (!isMessage(m)) return;
  if (m.type === "metrics:collect")
    process.send!({
      type: "metrics:collected",
      id: m.id,
      metrics: await registry.getMetricsAsJSON(),
    } satisfies Message);
  else if (m.type === "metrics:aggregated") waiting.get(m.id)?.(m.text);
}

/** In the supervisor: the IPC handler of its workers (Bun.spawn's `ipc`), given the live workers. */
export function metricsAggregator(workers: () => Subprocess[]) {
  let nextCollection = 0;
  const collections = new Map<number, { add(part: Metrics): void }>();
  return (message: unknown, from: Subprocess) => {
    if (!isMessage(message)) return;
    if (message.type === "metrics:collected") return collections.get(message.id)?.add(message.metrics);
    if (message.type !== "metrics:request") return;
    const live = workers();
    const id = ++nextCollection;
    void new Promise<Metrics[]>((resolve) => {
      const parts: Metrics[] = [];
      const timer = setTimeout(() => resolve(parts), collectTimeoutMs);
      collections.set(id, {
        add(part) {
          parts.push(part);
          if (parts.length < live.length) return;
          clearTimeout(timer);
          resolve(parts);
        },
      });
      for (const proc of live) proc.send({ type: "metrics:collect", id } satisfies Message);
    })
      .then((parts) => AggregatorRegistry.aggregate(parts).metrics())
      .then((text) => from.send({ type: "metrics:aggregated", id: message.id, text } satisfies Message))
      .finally(() => collections.delete(id));
  };
}
