// LISTEN that survives the database going away, at start or later. postgres.js keeps a channel's
// listener across reconnects by itself (also when the first LISTEN failed: its connection's close
// re-listens), so one call is enough; `onListen` runs after every (re)connect, since notifications
// sent while the connection was down are lost and whatever they keep true must be refreshed then.
import type { Sql } from "postgres";
import { describeError } from "../errors";
import { within } from "../lib/within";
import { log } from "../log";

export type Listening = { unlisten(): Promise<void> };

export function listenAlways(
  client: Sql,
  channel: string,
  onNotify: (payload: string) => void,
  onListen?: () => void,
): Listening {
  const first = client.listen(channel, onNotify, onListen).catch((error) => {
    log.warn("listen failed: retried on reconnect", { channel, error: describeError(error) });
    return null;
  });
  return {
    async unlisten() {
      // a database that is away must not hold up a shutdown
      const handle = await within(first, 1_000, `listen ${channel}`).catch(() => null);
      await handle?.unlisten().catch(() => {});
    },
  };
}
