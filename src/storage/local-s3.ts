// A local S3 server: SeaweedFS's `weed server -s3`, built into .tools/bin by scripts/bootstrap.sh. Used
// by `make start` with RECORDING_STORE=s3 and no S3_ENDPOINT, and by the tests; never in production.
// Everything listens on loopback; its one identity is the credentials given.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { log } from "../log";

export const weedBinary = fileURLToPath(new URL("../../.tools/bin/weed", import.meta.url));

export type LocalS3Ports = {
  s3: number;
  master: number;
  volume: number;
  filer: number;
  /** gRPC ports; weed's default is each HTTP port + 10000 */
  grpc?: { s3: number; master: number; volume: number; filer: number };
};

export type LocalS3Options = {
  /** where its volumes and metadata live (kept across restarts) */
  dir: string;
  ports: LocalS3Ports;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  readyTimeoutMs?: number;
  /** the `weed` command; .tools/bin/weed unless given */
  binary?: string;
};

export type LocalS3 = { endpoint: string; pid: number; stop(): Promise<void> };

export async function startLocalS3(options: LocalS3Options): Promise<LocalS3> {
  const { dir, ports, bucket, binary = weedBinary } = options;
  // existsSync follows a link: one into a cache that was cleared counts as missing
  if (!existsSync(binary))
    throw new Error(`SeaweedFS not found at ${binary}: bash scripts/bootstrap.sh builds it (once per machine)`);
  mkdirSync(dir, { recursive: true });
  const grpc = ports.grpc
    ? [
        `-s3.port.grpc=${ports.grpc.s3}`,
        `-master.port.grpc=${ports.grpc.master}`,
        `-volume.port.grpc=${ports.grpc.volume}`,
        `-filer.port.grpc=${ports.grpc.filer}`,
      ]
    : [];
  const args = [
    "server",
    "-ip=127.0.0.1",
    "-ip.bind=127.0.0.1",
    `-dir=${dir}`,
    `-master.port=${ports.master}`,
    // no anonymous usage report leaves the machine
    "-master.telemetry=false",
    "-master.volumeSizeLimitMB=64",
    // one master: a restarted one elects itself after this (10 s by default), the store is back sooner
    "-master.electionTimeout=1s",
    `-volume.port=${ports.volume}`,
    "-filer",
    `-filer.port=${ports.filer}`,
    `-filer.localSocket=${join(dir, "filer.sock")}`,
    "-s3",
    `-s3.port=${ports.s3}`,
    `-s3.localSocket=${join(dir, "s3.sock")}`,
    "-s3.port.iceberg=0",
    "-s3.port.lance=0",
    ...grpc,
  ];
  // the gateway's one identity, an admin: it creates the bucket on the first upload
  const env = {
    ...process.env,
    AWS_ACCESS_KEY_ID: options.accessKeyId,
    AWS_SECRET_ACCESS_KEY: options.secretAccessKey,
  };
  const child = spawn(binary, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  // a command that cannot run (not executable, a broken build) emits "error" and no "exit": without
  // this it would be an unhandled error, and the wait below would last until its deadline
  let spawnError = null as Error | null;
  let output = "";
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", (error) => {
      spawnError = error;
      resolve();
    });
  });
  const ended = () => spawnError !== null || child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    if (ended()) return;
    // killed, not asked: a graceful stop takes weed 25 s, and what it wrote is on disk already
    child.kill("SIGKILL");
    await exited;
  };

  const endpoint = `http://127.0.0.1:${ports.s3}`;
  const { accessKeyId, secretAccessKey } = options;
  const client = new Bun.S3Client({ endpoint, bucket, accessKeyId, secretAccessKey, region: "us-east-1" });
  // ready once an upload works: after a restart the gateway answers at once but holds writes until the
  // master has its volume server back, and the first write of all grows the volumes
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    const probe = client.write("readiness-probe", "ok").then(
      () => true,
      () => false,
    );
    // a weed that ended (or never ran) fails the wait at once, not after the deadline
    if (await Promise.race([probe, exited.then(() => false), Bun.sleep(2_000).then(() => false)])) break;
    if (ended() || Date.now() > deadline) {
      await stop();
      const why = spawnError
        ? `${binary} could not run (${spawnError.message})`
        : ended()
          ? `weed exited (${child.exitCode ?? child.signalCode}): ${output.trim()}`
          : `timed out after ${readyTimeoutMs} ms: ${output.trim()}`;
      throw new Error(`SeaweedFS did not start on ${endpoint}: ${why}`);
    }
    await Bun.sleep(200);
  }
  await client.delete("readiness-probe");
  log.info("local s3 started", { endpoint, bucket, pid: child.pid });
  return { endpoint, pid: child.pid!, stop };
}
