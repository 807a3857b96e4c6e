// What the tests of RECORDING_STORE=s3 check of a finished call's recording (bench/ imports seaweedfs.ts,
// so the assertions live here, apart from it).
import { expect } from "bun:test";
import type { Tenant } from "./api";
import type { SeaweedFs } from "./seaweedfs";

/**
 * A finished call's recording as the s3 store keeps it: the object under its id-only key, and the API's
 * recording route answering 302 to a presigned URL that fetches the same bytes. Resolves the WAV.
 */
export async function recordingFromBucket(
  store: SeaweedFs,
  api: { url: string },
  tenant: Pick<Tenant, "P" | "orgToken" | "organizationId">,
  agentTaskId: string,
): Promise<Buffer> {
  const stored = Buffer.from(await store.client.file(`recordings/${tenant.organizationId}/${agentTaskId}.wav`).bytes());
  const route = await fetch(`${api.url}${tenant.P}/agent-tasks/${agentTaskId}/recording`, {
    headers: { authorization: `Bearer ${tenant.orgToken}` },
    redirect: "manual",
  });
  expect(route.status).toBe(302);
  const location = route.headers.get("location")!;
  expect(location).toStartWith(`${store.endpoint}/${store.bucket}/`);
  const fetched = await fetch(location);
  expect(fetched.status).toBe(200);
  expect(Buffer.from(await fetched.arrayBuffer()).equals(stored)).toBe(true);
  return stored;
}
