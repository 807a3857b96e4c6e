// SIPp as the caller (or a crowd of callers): a scenario from test/sip/fixtures, run to completion,
// with its per-call log lines (<log> actions), its message trace and exit code (0: every call passed).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, reapWithParent } from "../../helpers/temporal";

export type SippResult = { code: number | null; logs: string[]; output: string; messages: string };

export type SippOptions = {
  scenario: string;
  trunkPort: number;
  /** Where SIPp sends (default 127.0.0.1) and the loopback address it sends from (default 127.0.0.1). */
  trunkHost?: string;
  localHost?: string;
  service: string;
  /** __NAME__ placeholders of the scenario; EXTRA is a list of header lines (may be empty). */
  vars?: Record<string, string | number>;
  extraHeaders?: string[];
  calls?: number;
  concurrent?: number;
  rate?: number;
  timeoutSeconds?: number;
  extra?: string[];
};

export type UacCall = {
  /** the From header (default an ordinary caller) */
  from?: string;
  law?: "PCMU" | "PCMA";
  /** where the first wait leads: "hangup", or "reinvite" (refresh the session, then hang up `callMs` later) */
  afterWait?: string;
  /** the wait for the bridge's BYE after a re-INVITE (and the hang-up's own wait) */
  callMs?: number;
  /** the SDP's c= address (default 127.0.0.1) */
  mediaIp?: string;
  /** the re-INVITE's c= address (default `mediaIp`) */
  reinviteMediaIp?: string;
};

/** The variables of uac-call.xml: a caller with RTP at `rtpPort` that waits `firstWaitMs` after the answer for the bridge's BYE. */
export const uacCallVars = (
  rtpPort: number,
  firstWaitMs: number,
  {
    from = "<sip:+15557654321@127.0.0.1>",
    law = "PCMU",
    afterWait = "hangup",
    callMs = 1000,
    mediaIp = "127.0.0.1",
    reinviteMediaIp = mediaIp,
  }: UacCall = {},
) => ({
  MEDIA_IP: mediaIp,
  REINVITE_MEDIA_IP: reinviteMediaIp,
  FROM: from,
  RTP_PORT: rtpPort,
  PT: law === "PCMU" ? 0 : 8,
  CODEC: law,
  FIRST_WAIT_MS: firstWaitMs,
  AFTER_WAIT: afterWait,
  CALL_MS: callMs,
});

export function fixture(name: string) {
  return new URL(`../fixtures/${name}`, import.meta.url).pathname;
}

export function writeScenario(dir: string, options: Pick<SippOptions, "scenario" | "vars" | "extraHeaders">): string {
  let xml = readFileSync(fixture(options.scenario), "utf8");
  xml = xml.replace(/^(\s*)__EXTRA__\n/m, (_m, indent: string) =>
    (options.extraHeaders ?? []).map((h) => `${indent}${h}\n`).join(""),
  );
  // __NAME__ takes vars.NAME; __NAME=default__ takes it too, or its default when it is not given
  xml = xml.replace(/__([A-Z_]+)(?:=([^_<>"]*))?__/g, (whole, name: string, fallback?: string) =>
    String(options.vars?.[name] ?? fallback ?? whole),
  );
  const path = join(dir, options.scenario);
  writeFileSync(path, xml);
  return path;
}

export function runSipp(options: SippOptions): Promise<SippResult> {
  return startSipp(options).then((sipp) => sipp.result);
}

export type Sipp = {
  result: Promise<SippResult>;
  /** The caller hangs up now instead of waiting out its first wait (uac-call.xml): an in-dialog NOTIFY tells it to. */
  hangUp(): Promise<void>;
};

/** SIPp started: its result once it exits, and the cue that makes its caller hang up. */
export async function startSipp(options: SippOptions): Promise<Sipp> {
  const dir = mkdtempSync(join(tmpdir(), "vas-sipp-"));
  const calls = options.calls ?? 1;
  const host = options.localHost ?? "127.0.0.1";
  const port = await freePort();
  const args = [
    `${options.trunkHost ?? "127.0.0.1"}:${options.trunkPort}`,
    "-sf",
    writeScenario(dir, options),
    "-s",
    options.service,
    "-i",
    host,
    "-p",
    String(port),
    // no -mp: SIPp then binds its (unused: the SDP names the test's RTP peer) audio and video sockets on
    // the first free pair from 6000 on, skipping a taken one; given a port it exits at once when that or
    // port + 2 is taken, and a port checked free here can be taken by then (an outgoing connection's
    // own port, a bridge's RTP pool, another process)
    "-mi",
    "127.0.0.1",
    "-m",
    String(calls),
    "-l",
    String(options.concurrent ?? calls),
    "-r",
    String(options.rate ?? calls),
    "-nostdin",
    "-timeout",
    `${options.timeoutSeconds ?? 30}s`,
    "-trace_logs",
    "-log_file",
    join(dir, "logs.log"),
    "-trace_msg",
    "-message_file",
    join(dir, "messages.log"),
    "-trace_err",
    "-error_file",
    join(dir, "errors.log"),
    "-timeout_error",
    ...(options.extra ?? []),
  ];
  const child = spawn("sipp", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  reapWithParent(child.pid!, "KILL");
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "");
  const result = new Promise<SippResult>((resolve) =>
    child.once("exit", (code) => {
      const logs = read("logs.log").split("\n").filter(Boolean);
      const messages = read("messages.log");
      output += read("errors.log");
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, logs, output, messages });
    }),
  );
  const hangUp = async () => {
    // the trace is written as it goes: the call's Call-ID, and the To of its dialog (the answer's tag),
    // which the caller's BYE takes from the last request it got
    const log = read("messages.log");
    const callId = /^Call-ID:\s*(\S+)/im.exec(log)?.[1];
    const to = [...log.matchAll(/^To:\s*(.*;tag=.*?)\s*$/gim)].at(-1)?.[1];
    if (!callId || !to) throw new Error(`the caller has no answered call to hang up:\n${log}`);
    await sendCue(host, port, callId, to);
  };
  return { result, hangUp };
}

/** An in-dialog NOTIFY to the SIPp at `host`:`port` (a cue its scenario waits for), `to` its To header. */
export async function sendCue(host: string, port: number, callId: string, to = `<sip:callee@${host}:${port}>`) {
  const socket = await Bun.udpSocket({ hostname: host });
  const cue = [
    `NOTIFY sip:cue@${host}:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP ${host}:${socket.port};branch=z9hG4bK-cue-${socket.port}`,
    `From: <sip:test@${host}>;tag=cue`,
    `To: ${to}`,
    `Call-ID: ${callId}`,
    "CSeq: 1 NOTIFY",
    "Event: hang-up",
    "Max-Forwards: 70",
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  socket.send(cue, port, host);
  socket.close();
}
