import type { Db } from "../db/client";
import type { Config } from "../config";
import type { OrganizationGate, TokenResolver } from "../services/auth";
import type { SecretBox } from "../crypto/secrets";

/** Everything a controller may use, built once by the composition root. */
export type Deps = {
  db: Db;
  config: Config;
  tokens: TokenResolver;
  organizations: OrganizationGate;
  secrets: SecretBox;
  checks: { database: () => Promise<boolean>; temporal: () => Promise<boolean> };
};
