// `bun run start:worker`: the worker process on Node from its build (worker-build.ts), not through
// tsx's loader; this process only builds it, passes signals on and exits as the worker does.
import { spawn } from "node:child_process";
import { buildWorker } from "./worker-build";

const worker = spawn("node", [await buildWorker()], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => worker.kill(signal));
worker.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
