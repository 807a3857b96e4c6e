// One JSON object per line on stdout; callers pass structured fields, never secrets.
type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
// info until the process applies its config (only src/config.ts reads the environment)
let threshold = order.info;

export function setLogLevel(level: string) {
  threshold = order[level as Level] ?? order.info;
}

function write(level: Level, msg: string, fields: Record<string, unknown>) {
  if (order[level] < threshold) return;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
}

export const log = {
  debug: (msg: string, fields: Record<string, unknown> = {}) => write("debug", msg, fields),
  info: (msg: string, fields: Record<string, unknown> = {}) => write("info", msg, fields),
  warn: (msg: string, fields: Record<string, unknown> = {}) => write("warn", msg, fields),
  error: (msg: string, fields: Record<string, unknown> = {}) => write("error", msg, fields),
};
