// SeaweedFS for tests: the real S3 peer of RECORDING_STORE=s3 (`weed server -s3`, built by
// scripts/bootstrap.sh into .tools/bin), on free loopback ports and a throw-away folder, reaped with
// the test process. It can be stopped and started again on the same ports and data (store outages).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, reapWithParent } from "./temporal";

const weed = fileURLToPath(new URL("../../.tools/bin/weed", import.meta.url));

export type SeaweedFs = {
  endpoint: string;
  bucket: string;
  /** the bridge's and the API's settings for this store (RECORDING_STORE=s3) */
  env: Record<string, string>;
  /** a client of the bucket, as the service's own */
  client: Bun.S3Client;
  /** stops the server (the store is away); its data stays */
  stop(): Promise<void>;
  /** starts it again on the same ports and data, resolved once S3 answers */
  start(): Promise<void>;
  /** stops it and removes its data */
  close(): Promise<void>;
};

export async function startSeaweedFs(options: { bucket?: string } = {}): Promise<SeaweedFs> {
  const dir = mkdtempSync(join(tmpdir(), "seaweedfs-test-"));
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = await Promise.all(
    Array.from({ length: 8 }, () => freePort()),
  );
  const bucket = options.bucket ?? "recordings";
  const credentials = { accessKeyId: "test-access-key", secretAccessKey: "test-secret-key" };
  const endpoint = `http://127.0.0.1:${s3}`;
  const args = [
    "server",
    "-ip=127.0.0.1",
    "-ip.bind=127.0.0.1",
    `-dir=${dir}`,
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    // no anonymous usage report leaves a test machine
    "-master.telemetry=false",
    "-master.volumeSizeLimitMB=64",
    // one master: a restarted one elects itself after this (10 s by default), the store is back sooner
    "-master.electionTimeout=1s",
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    "-filer",
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(dir, "filer.sock")}`,
    "-s3",
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    `-s3.localSocket=${join(dir, "s3.sock")}`,
    "-s3.port.iceberg=0",
    "-s3.port.lance=0",
  ];
  // these credentials are the S3 gateway's one admin identity (it creates the bucket on first upload)
  const env = {
    ...process.env,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  };
  const client = new Bun.S3Client({ endpoint, bucket, region: "us-east-1", ...credentials });
  let child: ChildProcess | null = null;
  let output = "";

  const start = async () => {
    const proc = spawn(weed, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    reapWithParent(proc.pid!, "KILL");
    output = "";
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    };
    proc.stdout!.on("data", keep);
    proc.stderr!.on("data", keep);
    const exited = new Promise<never>((_, reject) =>
      proc.once("exit", (code) => reject(new Error(`weed exited (${code}) before S3 answered: ${output}`))),
    );
    // ready once an upload works: after a restart the gateway answers at once but holds writes until
    // the master has its volume server back (tens of seconds), and the first write of all grows volumes
    const ready = (async () => {
      for (;;) {
        const probe = client.write("readiness-probe", "ok").then(
          () => true,
          () => false,
        );
        if (await Promise.race([probe, Bun.sleep(2_000).then(() => false)])) break;
        await Bun.sleep(200);
      }
      await client.delete("readiness-probe");
    })();
    await Promise.race([ready, exited]);
  };

  const stop = async () => {
    const proc = child as ChildProcess | null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill("SIGKILL");
    await exited;
  };

  await start();
  return {
    endpoint,
    bucket,
    client,
    env: {
      RECORDING_STORE: "s3",
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
