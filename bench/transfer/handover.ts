// bench/transfer, the hand-over: from the LLM's transfer_call tool call to the REFER on the wire (seen
// by the caller, SIPp through Kamailio) and, for method dial, to the second leg's INVITE on the wire
// (seen by the destination, a script UAS behind Kamailio's digest challenge that answers 486 at once).
// The tool call is timed as the fake provider writes it to the bridge's websocket (same process, so the
// bridge reads it within a turn of this event loop); the REFER from SIPp's message trace (wall clock,
// µs), the INVITE on this process's clock. Calls one after another, each: answer, greeting
// instructions answered by the tool call alone, the destination's message spoken (the fake speaks
// 12 ms of audio a character: played out in real time before anything goes on the wire, the floor of
// both figures), then the REFER or the INVITE.
import { muLawEncode } from "../../src/audio/g711";
import { buildRtp } from "../../src/media/rtp-packet";
import { toneFor } from "../../test/fakes/realtime-responses";
import { startSipWorld } from "../../test/sip/helpers/sip-world";
import { runSipp, type SippResult } from "../../test/sip/helpers/sipp";
import { percentile } from "../lib/harness";
import { startScriptUas } from "../lib/script-uas";

// a number each for the two assistants (one calling REFER, one dialling), the destination behind the trunk
const dids = { refer: "+15550700001", dial: "+15550700003" };
const destination = "+15550700002";
const greeting = "Hello, Acme desk.";
const message = "One moment.";

export type Handover = { method: "refer" | "dial"; ms: number[]; messageMs: number };

/** Wall-clock times (performance.now() scale) of the requests `method` SIPp received, from its trace. */
function receivedAt(result: SippResult, method: string): number[] {
  const times: number[] = [];
  for (const block of result.messages.split(/^-{20,} /m)) {
    const [stamp, direction, , startLine] = block.split("\n");
    if (!direction?.includes("message received") || !startLine?.startsWith(`${method} `)) continue;
    const [, y, mo, d, h, mi, s, us] = /^(\d+)-(\d+)-(\d+)\s+(\d+):(\d+):(\d+)\.(\d+)/.exec(stamp!)!.map(Number);
    const wall = new Date(y!, mo! - 1, d!, h!, mi!, s!).getTime() + us! / 1000; // SIPp writes local time
    times.push(wall - performance.timeOrigin);
  }
  return times;
}

/**
 * The callers' media, all calls on one socket: each packet the bridge sends is answered with a silent
 * one (a call plays its agent audio from the caller's first packet on, like a phone that streams).
 */
async function rtpEcho() {
  const silence = muLawEncode(new Int16Array(160));
  const sequences = new Map<string, number>();
  return Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data(socket, _data, port, address) {
        const from = `${address}:${port}`;
        const sequence = (sequences.get(from) ?? 0) + 1;
        sequences.set(from, sequence);
        const header = { payloadType: 0, marker: false, sequence, timestamp: sequence * 160, ssrc: port };
        socket.send(buildRtp(header, silence), port, address);
      },
      error() {},
    },
  });
}

export async function measureHandover(calls: number, say: (msg: string) => void): Promise<Handover[]> {
  const world = await startSipWorld({ nobody: "unused" }, {});
  const uas = await startScriptUas();
  const echo = await rtpEcho();
  try {
    const desk = await world.registeredCredential({
      user: "desk",
      dids: { [dids.refer]: "desk", [dids.dial]: "desk", [destination.slice(1)]: `127.0.0.1:${uas.port}` },
      number: dids.refer,
      bridge: "bench-transfer",
      maxAgentTasks: 10,
    });
    const trunk = desk.trunk;
    const numberIds = { refer: desk.numberId, dial: await world.createNumber(desk.credentialId, dids.dial) };

    const toolCalls: number[] = [];
    const assistant = (method: "refer" | "dial") =>
      world.createAssistant({
        numberId: numberIds[method],
        greeting,
        extensions: [
          {
            type: "transfer_call",
            parameters: {
              destinations: [{ to: destination, description: "A person", message }],
              method,
              ringTimeoutSeconds: 5,
            },
          },
        ],
        fake: {
          onInstructions: (instructions) => {
            const words = instructions.slice(instructions.indexOf("nothing else: ") + "nothing else: ".length);
            return words === greeting
              ? { toolCalls: [{ name: "transfer_call", arguments: { destination } }] }
              : { text: words };
          },
          onSend: (event) => {
            if (event.type === "response.function_call_arguments.done") toolCalls.push(performance.now());
          },
        },
      });
    const sipp = (method: "refer" | "dial", scenario: string, vars: Record<string, string | number>) =>
      runSipp({
        scenario,
        trunkPort: trunk.port,
        service: dids[method],
        vars: { RTP_PORT: echo.port, ...vars },
        calls,
        concurrent: 1, // one after another: the i-th tool call is the i-th call's
        timeoutSeconds: 30 + 10 * calls,
      });
    const paired = (method: "refer" | "dial", onWire: number[], result: SippResult) => {
      if (onWire.length !== calls || toolCalls.length !== calls)
        throw new Error(
          `${method}: ${toolCalls.length} tool calls, ${onWire.length} on the wire, of ${calls} calls\n${result.output}`,
        );
      return onWire.map((at, i) => at - toolCalls[i]!);
    };
    const messageMs = (toneFor(message).length / 24_000) * 1000;
    const rows: Handover[] = [];

    say(`handover: ${calls} calls transferred by REFER (the caller answers 202, NOTIFY 200)`);
    await assistant("refer");
    const referred = await sipp("refer", "uac-transferee.xml", {
      REFER_STATUS: "202 Accepted",
      AFTER_REFER: "notify",
      NOTIFY_DELAY_MS: 0,
      FINAL: "200 OK",
      CALL_MS: 10_000,
    });
    rows.push({ method: "refer", ms: paired("refer", receivedAt(referred, "REFER"), referred), messageMs });

    say(`handover: ${calls} calls transferred by a second leg (method dial; the destination answers 486)`);
    toolCalls.length = 0;
    await assistant("dial");
    const dialled = await sipp("dial", "uac-call.xml", {
      FROM: "<sip:+15557654321@127.0.0.1>",
      PT: 0,
      CODEC: "PCMU",
      FIRST_WAIT_MS: 2500,
      AFTER_WAIT: "hangup",
      CALL_MS: 1000,
    });
    rows.push({ method: "dial", ms: paired("dial", uas.arrivals, dialled), messageMs });
    return rows;
  } finally {
    echo.close();
    uas.close();
    await world.stop();
  }
}

export const handoverRow = ({ method, ms, messageMs }: Handover) => ({
  "tool call to": method === "refer" ? "REFER at the caller" : "second leg's INVITE at the destination",
  calls: ms.length,
  "p50 ms": percentile(ms, 50).toFixed(1),
  "p99 ms": percentile(ms, 99).toFixed(1),
  "message audio ms (floor)": messageMs.toFixed(0),
  "p50 less the message ms": (percentile(ms, 50) - messageMs).toFixed(1),
  "p99 less the message ms": (percentile(ms, 99) - messageMs).toFixed(1),
});
