// What every activity gets injected: the worker wires real ones, and nothing reads globals.
import type { Config } from "../../src/config";
import type { SecretBox } from "../../src/crypto/secrets";
import type { Db } from "../../src/db/client";

export type ActivityDeps = {
  db: Db;
  secretBox: SecretBox;
  config: Pick<Config, "hooks" | "outbound" | "bridge" | "temporal">;
};
