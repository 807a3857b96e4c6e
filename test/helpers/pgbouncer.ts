// PgBouncer in transaction mode in front of the run's Postgres, on a free port: what a production
// deployment with DATABASE_PREPARE=false sits behind. Named prepared statements are refused
// (Debian 12's PgBouncer predates their support in 1.21).
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort } from "./temporal";

const binary = existsSync("/usr/sbin/pgbouncer") ? "/usr/sbin/pgbouncer" : "pgbouncer";

/** `databaseUrl` with its host and port replaced by a new PgBouncer's. */
export async function startPgBouncer(databaseUrl: string) {
  const target = new URL(databaseUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "vas-pgbouncer-"));
  // PgBouncer refuses to run as root: it drops to the postgres user, which must read these files
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(target.username || "postgres");
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    `[databases]
* = host=${target.hostname} port=${target.port || 5432}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "users.txt")}
pool_mode = transaction
default_pool_size = 4
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
`,
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const proc = spawn(binary, [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (up) break;
    if (i > 100 || proc.exitCode !== null) throw new Error(`pgbouncer did not start: ${stderr}`);
    await Bun.sleep(50);
  }
  return {
    url: url.toString(),
    stop() {
      proc.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
