// Activities get their dependencies injected, so the worker wires real ones and nothing reads globals.
import type { Config } from "../../src/config";
import type { SecretBox } from "../../src/crypto/secrets";
import type { Db } from "../../src/db/client";
import { createDeliverAttempt } from "./deliver-attempt";

export type ActivityDeps = { db: Db; secretBox: SecretBox; config: Pick<Config, "hooks" | "outbound"> };

export function createActivities(deps: ActivityDeps) {
  return { deliverAttempt: createDeliverAttempt(deps) };
}

export type HookActivities = ReturnType<typeof createActivities>;
