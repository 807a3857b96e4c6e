// The worker process (workers/main.ts) as one Node ES module: our TypeScript bundled by Bun, every
// package left to node_modules. `node --import tsx workers/main.ts` spends most of its start in tsx's
// loader (each of ~100 source files and every package module goes through its hooks); the built file
// starts on plain Node. Built under .data/worker-build/, named by a hash of its code, so a changed
// source is never run from a stale build and concurrent builders write the same file.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BunPlugin } from "bun";

const root = fileURLToPath(new URL("../..", import.meta.url));
const outDir = join(root, ".data", "worker-build");

/**
 * A bundle has one import.meta.url (its own file); each source file's stands in for it, so paths it
 * names relative to itself (drizzle/, workflows/, .data/, .tools/) resolve as when run from source.
 */
const sourceUrls: BunPlugin = {
  name: "source import.meta.url",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async ({ path }) => ({
      contents: (await readFile(path, "utf8")).replace(
        /\bimport\.meta\.url\b/g,
        JSON.stringify(pathToFileURL(path).href),
      ),
      loader: "ts",
    }));
  },
};

/** Builds workers/main.ts (~0.2 s) and resolves with the path of the file to run with `node`. */
export async function buildWorker(): Promise<string> {
  const result = await Bun.build({
    entrypoints: [join(root, "workers", "main.ts")],
    target: "node",
    format: "esm",
    packages: "external",
    plugins: [sourceUrls],
  });
  const [output] = result.outputs;
  if (!result.success || !output) throw new AggregateError(result.logs, "building workers/main.ts failed");
  const code = await output.text();
  const path = join(outDir, `main-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`);
  if (existsSync(path)) return path;
  await mkdir(outDir, { recursive: true });
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, code);
  await rename(partial, path);
  return path;
}

/** Whether a command line runs the worker, built (above) or through tsx: the benches find its process by it. */
export const runsWorker = (cmdline: string) =>
  cmdline.includes("workers/main.ts") || /worker-build\/main-[0-9a-f]+\.mjs/.test(cmdline);
