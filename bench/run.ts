// `bun run bench <name> [options]`: runs one benchmark by name (each prints progress and a table).
import { readdirSync, existsSync } from "node:fs";
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
process.exit(await proc.exited);
