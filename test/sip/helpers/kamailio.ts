// A real Kamailio as the trunk: registrar with digest auth and a proxy to the registered contacts,
// on a free port, as a foreground child killed at the end (and reaped if the test process dies).
import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, reapWithParent } from "../../helpers/temporal";

export type Trunk = { host: string; port: number; stop(): Promise<void>; output(): string };

const templateOf = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8");

/**
 * users: name => password; dids: number => "user" (DID in the Request-URI) or "user;contact". `host`
 * is the loopback address it listens on (a second trunk gets a source address of its own). `config`:
 * the fixture (kamailio-outbound.cfg: the trunk our outbound calls go through, dids => "host:port").
 */
export async function startKamailio(
  users: Record<string, string>,
  dids: Record<string, string>,
  host = "127.0.0.1",
  config = "kamailio.cfg",
): Promise<Trunk> {
  const template = templateOf(config);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "vas-kamailio-"));
  const init = [
    ...Object.entries(users).map(([u, p]) => `\t$sht(users=>${u}) = "${p}";`),
    ...Object.entries(dids).map(([n, u]) => `\t$sht(dids=>${n}) = "${u}";`),
  ].join("\n");
  const cfg = join(dir, "kamailio.cfg");
  writeFileSync(
    cfg,
    template.replaceAll("__PORT__", String(port)).replaceAll("__HOST__", host).replace("__USERS__", init),
  );
  // its own process group: its workers outlive a main process killed with SIGKILL, so the group goes
  const child: ChildProcess = spawn("kamailio", ["-DD", "-E", "-f", cfg, "-Y", dir, "-w", dir, "-m", "64", "-M", "8"], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  reapWithParent(-child.pid!, "KILL");
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await waitForSip(host, port, () => output, child);
  return {
    host,
    port,
    output: () => output,
    async stop() {
      const group = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // already gone
        }
      };
      if (child.exitCode === null && child.signalCode === null) group("SIGTERM");
      await Promise.race([exited, Bun.sleep(3000)]);
      group("SIGKILL"); // workers that stayed behind
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Until an OPTIONS gets any answer. */
async function waitForSip(host: string, port: number, output: () => string, child: ChildProcess) {
  const socket = createSocket("udp4");
  let answered = false;
  socket.on("message", () => (answered = true));
  socket.on("error", () => {}); // port unreachable until kamailio listens
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", () => r()));
  const local = socket.address().port;
  try {
    for (let i = 0; i < 100 && !answered; i++) {
      if (child.exitCode !== null) throw new Error(`kamailio exited: ${output()}`);
      const ping = [
        `OPTIONS sip:${host}:${port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-ping${i}`,
        "Max-Forwards: 70",
        `From: <sip:ping@127.0.0.1>;tag=p${i}`,
        `To: <sip:${host}:${port}>`,
        `Call-ID: ping-${i}@test`,
        "CSeq: 1 OPTIONS",
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n");
      socket.send(ping, port, host);
      await Bun.sleep(100);
    }
    if (!answered) throw new Error(`kamailio did not answer on ${port}: ${output()}`);
  } finally {
    socket.close();
  }
}
