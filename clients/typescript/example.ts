// Creates an assistant and reads it back, then renames it only if nobody changed it in between:
//   VAS_URL=http://127.0.0.1:3000 VAS_TOKEN=vas_... VAS_VENDOR=<uuid> VAS_ORGANIZATION=<uuid> \
//     bun clients/typescript/example.ts
import { createVasClient, type VasClient } from "./index";

const ASSISTANTS = "/api/v1/vendors/{vendorId}/organizations/{organizationId}/assistants";
const ASSISTANT = `${ASSISTANTS}/{assistantId}` as const;

export async function createAndReadBack(vas: VasClient, vendorId: string, organizationId: string, name: string) {
  // the same key on a retry (a time-out, say) replays the first answer instead of creating a second assistant
  const idempotencyKey = crypto.randomUUID();
  const created = await vas.POST(ASSISTANTS, {
    params: { path: { vendorId, organizationId }, header: { "Idempotency-Key": idempotencyKey } },
    body: { name },
  });
  if (!created.data) throw new Error(`create failed: ${created.error?.message}`);
  const assistantId = created.data.data.id;
  const path = { vendorId, organizationId, assistantId };
  const read = await vas.GET(ASSISTANT, { params: { path } });
  if (!read.data) throw new Error(`read failed: ${read.error?.message}`);
  // If-Match: the rename applies only while the assistant is as we read it (412 otherwise)
  const etag = read.response.headers.get("etag") ?? "*";
  const renamed = await vas.PUT(ASSISTANT, {
    params: { path, header: { "If-Match": etag } },
    body: { name: `${name} (renamed)` },
  });
  return { created: created.data.data, read: read.data.data, etag, renamedStatus: renamed.response.status };
}

if (import.meta.main) {
  const env = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`set ${name}`);
    return value;
  };
  const vas = createVasClient({ baseUrl: env("VAS_URL"), token: env("VAS_TOKEN") });
  console.log(await createAndReadBack(vas, env("VAS_VENDOR"), env("VAS_ORGANIZATION"), "Front desk"));
}
