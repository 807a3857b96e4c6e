// The hook workflows as one webpack bundle, built once per version of their code: bundling costs ~3 s
// of CPU at every worker start (measured on the 2-core machine), and the test suite starts dozens of
// workers. The bundle is kept under .data/, keyed by a hash of workflows/*.ts and the SDK version, so a
// changed workflow is never run from a stale bundle.
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleOption } from "@temporalio/worker";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const workflowsDir = fileURLToPath(new URL("../workflows/", import.meta.url));
const cacheDir = fileURLToPath(new URL("../.data/workflow-bundles/", import.meta.url));

export async function loadWorkflowBundle(): Promise<WorkflowBundleOption> {
  const codePath = join(cacheDir, `${await sourceHash()}.js`);
  if (existsSync(codePath)) return { codePath };
  const { code } = await bundleWorkflowCode({
    workflowsPath: join(workflowsDir, "index.ts"),
    logger: new DefaultLogger("WARN"),
  });
  // another worker may be writing the same bundle: each writes its own file and renames it into place;
  // a folder we cannot write to only costs the next start the bundling again
  const partial = `${codePath}.${process.pid}.tmp`;
  await mkdir(cacheDir, { recursive: true })
    .then(() => writeFile(partial, code))
    .then(() => rename(partial, codePath))
    .catch(() => {});
  return { code };
}

async function sourceHash(): Promise<string> {
  const hash = createHash("sha256");
  const sdk = createRequire(import.meta.url)("@temporalio/workflow/package.json") as { version: string };
  hash.update(sdk.version);
  const files = (await readdir(workflowsDir)).filter((f) => f.endsWith(".ts")).sort();
  for (const file of files) hash.update(file).update(await readFile(join(workflowsDir, file)));
  return hash.digest("hex").slice(0, 16);
}
