// `bun run bench <name> [options]`: runs one benchmark by name (each prints progress and a table).
import { readdirSync, existsSync } from "node:fs";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const names = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(`${here}${d.name}/run.ts`))
  .map((d) => d.name);
const [name, ...args] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  console.error(`usage: bun run bench <${names.join("|")}> [options]`);
  process.exit(2);
}
const proc = Bun.spawn(["bun", `${here}${name}/run.ts`, ...args], { stdio: ["inherit", "inherit", "inherit"] });
const code = await proc.exited;
// a bench killed (the OOM killer, a time-out) failed whatever the exit code says: non-zero, as a shell
// reports it (128 + the signal's number), and named, since a killed bench prints no error of its own
const signal = proc.signalCode;
if (signal !== null) {
  console.error(`bench ${name} was killed by ${signal}`);
  process.exit(128 + (typeof signal === "number" ? signal : constants.signals[signal]));
}
process.exit(code);
