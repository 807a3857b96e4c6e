import type { Db } from "../db/client";
import type { Config } from "../config";
import type { OrganizationGate, TokenResolver } from "../services/auth";
import type { SecretBox } from "../crypto/secrets";
import type { OutboundGuard } from "../net/outbound-guard";

/** Everything a controller may use, built once by the composition root. */
export type Deps = {
  db: Db;
  config: Config;
  tokens: TokenResolver;
  organizations: OrganizationGate;
  secrets: SecretBox;
  /** checks the destinations tenants configure (hook URLs, tool serverUrls, SIP hosts) */
  guard: OutboundGuard;
  checks: { database: () => Promise<boolean>; temporal: () => Promise<boolean> };
  /** false until the process's start (migrations) is done: until then API routes answer 503 */
  started: () => boolean;
};
