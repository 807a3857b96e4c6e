// SeaweedFS for tests: the real S3 peer of RECORDING_STORE=s3 (src/storage/local-s3.ts), on free
// loopback ports and a throw-away folder, reaped with the test process. It can be stopped and started
// again on the same ports and data (store outages).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalS3, type LocalS3, type LocalS3Options } from "../../src/storage/local-s3";
import { freeListenPort, reapWithParent } from "./temporal";

export type SeaweedFs = {
  endpoint: string;
  bucket: string;
  /** the bridge's and the API's settings for this store (RECORDING_STORE=s3) */
  env: Record<string, string>;
  /** a client of the bucket, as the service's own */
  client: Bun.S3Client;
  /** stops the server (the store is away); its data stays */
  stop(): Promise<void>;
  /** starts it again on the same ports and data, resolved once it takes uploads */
  start(): Promise<void>;
  /** stops it and removes its data */
  close(): Promise<void>;
};

/** A SeaweedFS, started. */
export async function startSeaweedFs(options: { bucket?: string } = {}): Promise<SeaweedFs> {
  const store = await seaweedFs(options);
  await store.start();
  return store;
}

/**
 * A SeaweedFS whose ports and settings are chosen but which is not started yet: what talks to it may
 * start alongside (it takes about 10 s, most of it its filer's wait for peers).
 */
export async function seaweedFs(options: { bucket?: string } = {}): Promise<SeaweedFs> {
  const dir = mkdtempSync(join(tmpdir(), "seaweedfs-test-"));
  const port = async () => ({
    s3: await freeListenPort(),
    master: await freeListenPort(),
    volume: await freeListenPort(),
    filer: await freeListenPort(),
  });
  const ports = { ...(await port()), grpc: await port() };
  const s3 = ports.s3;
  const settings: LocalS3Options = {
    dir,
    ports,
    bucket: options.bucket ?? "recordings",
    accessKeyId: "test-access-key",
    secretAccessKey: "test-secret-key",
  };
  let server: LocalS3 | null = null;
  const start = async () => {
    server = await startLocalS3(settings);
    reapWithParent(server.pid, "KILL");
  };
  const stop = async () => {
    await server?.stop();
    server = null;
  };
  const endpoint = `http://127.0.0.1:${s3}`;
  const { bucket, accessKeyId, secretAccessKey } = settings;
  return {
    endpoint,
    bucket,
    client: new Bun.S3Client({ endpoint, bucket, accessKeyId, secretAccessKey, region: "us-east-1" }),
    env: {
      RECORDING_STORE: "s3",
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: accessKeyId,
      S3_SECRET_ACCESS_KEY: secretAccessKey,
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
