// startLocalS3 when `weed` cannot serve: it rejects at once with the reason, never waits out its
// deadline (a test file's beforeAll once hung 120 s on a weed that could not be spawned).
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalS3, type LocalS3Options } from "../../src/storage/local-s3";
import { freePort } from "../helpers/temporal";

const dir = mkdtempSync(join(tmpdir(), "local-s3-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function options(binary: string): Promise<LocalS3Options> {
  const s3 = await freePort();
  return {
    dir: join(dir, "data"),
    ports: { s3, master: s3, volume: s3, filer: s3 },
    bucket: "recordings",
    accessKeyId: "a",
    secretAccessKey: "b",
    binary,
    // the deadline is not what ends these waits: each error below names its cause, not a time-out
    readyTimeoutMs: 30_000,
  };
}

test("a weed that is missing, or cannot be executed, fails the start with its path", async () => {
  const missing = join(dir, "missing-weed");
  await expect(startLocalS3(await options(missing))).rejects.toThrow(
    `SeaweedFS not found at ${missing}: bash scripts/bootstrap.sh builds it`,
  );

  const notExecutable = join(dir, "weed-not-executable");
  writeFileSync(notExecutable, "not a program");
  chmodSync(notExecutable, 0o644);
  await expect(startLocalS3(await options(notExecutable))).rejects.toThrow(`${notExecutable} could not run (`);
});

test("a weed that exits at once fails the start with what it printed", async () => {
  const exits = join(dir, "weed-exits");
  writeFileSync(exits, "#!/bin/sh\necho 'bind: address already in use' >&2\nexit 3\n");
  chmodSync(exits, 0o755);
  await expect(startLocalS3(await options(exits))).rejects.toThrow("weed exited (3): bind: address already in use");
});
