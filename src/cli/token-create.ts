// Issues an API token straight into the database, for bootstrapping without HTTP:
//   bun run token:create --vendor-name "Acme"                 (new vendor + vendor token)
//   bun run token:create --vendor <id> [--organization <id>] [--name ci]
import { parseArgs } from "node:util";
import { loadConfig } from "../config";
import { createDb } from "../db/client";
import { migrateDatabase } from "../db/migrate";
import { createApiToken, createVendor } from "../services/tenancy";
import { AppError } from "../errors";

const { values } = parseArgs({
  options: {
    vendor: { type: "string" },
    "vendor-name": { type: "string" },
    organization: { type: "string" },
    name: { type: "string" },
  },
});

if (!values.vendor === !values["vendor-name"]) {
  console.error("usage: token:create (--vendor <id> | --vendor-name <name>) [--organization <id>] [--name <label>]");
  process.exit(2);
}

const config = loadConfig();
await migrateDatabase(config.databaseUrl);
const { db, close } = createDb(config.databaseUrl, { max: 1 });
try {
  const vendorId = values.vendor ?? (await createVendor(db, { name: values["vendor-name"]! })).id;
  const token = await createApiToken(db, vendorId, {
    name: values.name ?? "cli",
    organizationId: values.organization ?? null,
  });
  // the token goes to stdout alone so scripts can capture it; the rest to stderr
  console.error(
    `vendor ${vendorId}${token.organizationId ? `, organization ${token.organizationId}` : ""}, token id ${token.id}`,
  );
  console.log(token.token);
} catch (error) {
  console.error(error instanceof AppError ? error.message : String(error));
  process.exitCode = 1;
} finally {
  await close();
}
