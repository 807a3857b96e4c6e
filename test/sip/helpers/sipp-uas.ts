// SIPp as the callee of an outbound call: one UAS scenario from test/sip/fixtures on a free port,
// taking one call, with its message trace once it exits.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, reapWithParent } from "../../helpers/temporal";
import { sendCue, writeScenario, type SippResult } from "./sipp";

export type SippUas = {
  port: number;
  result: Promise<SippResult>;
  /** The callee hangs up now (ending `uasEnding.byeOnCue`): an in-dialog NOTIFY tells it to. */
  hangUp(): Promise<void>;
  stop(): void;
};

/**
 * `port`: where the trunk routes the callee's number (default: a free one); `calls`: how many it takes;
 * `host`: the loopback address it listens on.
 */
export async function startSippUas(
  scenario: string,
  vars: Record<string, string | number> = {},
  port?: number,
  calls = 1,
  host = "127.0.0.1",
): Promise<SippUas> {
  const dir = mkdtempSync(join(tmpdir(), "vas-sipp-uas-"));
  port ??= await freePort();
  const args = [
    "-sf",
    writeScenario(dir, { scenario, vars }),
    "-i",
    host,
    "-p",
    String(port),
    // no -mp: SIPp finds free media ports itself (see runSipp)
    "-m",
    String(calls),
    "-nostdin",
    "-timeout",
    "90s",
    "-timeout_error",
    "-trace_msg",
    "-message_file",
    join(dir, "messages.log"),
    "-trace_err",
    "-error_file",
    join(dir, "errors.log"),
  ];
  const child = spawn("sipp", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  reapWithParent(child.pid!, "KILL");
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  const result = new Promise<SippResult>((resolve) =>
    child.once("exit", (code) => {
      const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "");
      const messages = read("messages.log");
      output += read("errors.log");
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, logs: [], output, messages });
    }),
  );
  await Bun.sleep(300); // SIPp binds its port before it reads the scenario's first recv
  const hangUp = async () => {
    // SIPp writes its trace as it goes and matches a request to its call by Call-ID
    const log = readFileSync(join(dir, "messages.log"), "utf8");
    const callId = /^Call-ID:\s*(\S+)/im.exec(log)?.[1];
    if (!callId) throw new Error(`the callee has no call to hang up:\n${log}`);
    await sendCue(host, port!, callId);
  };
  return { port, result, hangUp, stop: () => child.kill("SIGKILL") };
}

/** The 200 of the last request received. */
const okAnswer = `<send>
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0

    ]]>
  </send>`;

const bye = `<send retrans="500">
    <![CDATA[
      BYE [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      [routes]
      From: <sip:callee@[local_ip]:[local_port]>;tag=[pid]SIPpTag01[call_number]
      To: [$caller]
      [last_Call-ID:]
      CSeq: 2 BYE
      Contact: <sip:callee@[local_ip]:[local_port];transport=[transport]>
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv response="200" />`;

/**
 * What the UAS writes after the ACK of its 200: wait for our BYE, or send its own after `talkMs`, or
 * when the test tells it to (`hangUp()`).
 */
export const uasEnding = {
  /**
   * For uas-answer-no-ringing.xml, from the ACK on: our ACK and BYE sent back to back (a 2xx we end at
   * once), taken in either order (through a proxy of several processes the BYE may pass the ACK).
   */
  ackAndBye: `<recv request="ACK" optional="true" next="acked" />
  <recv request="BYE" next="byefirst" />
  <label id="acked" />
  <recv request="BYE" />
  ${okAnswer}
  <nop next="done" />
  <label id="byefirst" />
  ${okAnswer}
  <recv request="ACK" />
  <label id="done" />`,
  awaitBye: `<recv request="BYE" timeout="60000" />
  ${okAnswer}`,
  byeAfter: (talkMs: number) => `<pause milliseconds="${talkMs}" />
  ${bye}`,
  /** The callee talks until the test calls `hangUp()`: no race with what the test waits for meanwhile. */
  byeOnCue: `<recv request="NOTIFY" timeout="60000" />
  ${okAnswer}
  ${bye}`,
};
