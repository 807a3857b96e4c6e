// Call recordings as objects in an S3-compatible bucket, through Bun's own S3 client (no SDK): put from
// a file, presigned GET URLs for the API and the hooks, deletes for retention. Keys carry no tenant
// names, only ids: <prefix><organizationId>/<agentTaskId>.wav.
import type { Config } from "../config";

export type S3Settings = NonNullable<Config["recordingStore"]["s3"]>;

export interface RecordingObjects {
  keyOf(organizationId: string, agentTaskId: string): string;
  /** Uploads the file at `path` as `key`, streamed in parts (never whole in memory). */
  put(key: string, path: string, contentType: string): Promise<void>;
  /** A GET URL for `key`, valid `expiresInSeconds`; made locally, no request. */
  presign(key: string, expiresInSeconds: number): string;
  /** Deletes `key`; a key that is already gone is not an error. */
  remove(key: string): Promise<void>;
  /** Deletes every object under the organization's folder (the organization is gone). */
  removeOrganization(organizationId: string): Promise<number>;
}

// the S3 minimum; a 16 MiB recording goes in 4 parts
const partSize = 5 * 1024 * 1024;

export function recordingObjects(settings: S3Settings): RecordingObjects {
  // Bun.S3Client, not an import from "bun": the hook worker runs on Node and must be able to load this module
  const client = new Bun.S3Client({
    ...(settings.endpoint && { endpoint: settings.endpoint }),
    region: settings.region,
    bucket: settings.bucket,
    accessKeyId: settings.accessKeyId,
    secretAccessKey: settings.secretAccessKey,
    // path-style addressing: what S3-compatible servers (SeaweedFS, MinIO, Ceph) all understand
    virtualHostedStyle: false,
  });
  const folderOf = (organizationId: string) => `${settings.prefix}${organizationId}/`;
  return {
    keyOf: (organizationId, agentTaskId) => `${folderOf(organizationId)}${agentTaskId}.wav`,
    async put(key, path, contentType) {
      const writer = client.file(key).writer({ type: contentType, partSize, queueSize: 1, retry: 1 });
      try {
        // a part at a time, each flushed before the next is read: the sink would otherwise take the
        // whole file ahead of the network (bench/recording-store: 28.7 MB of memory for a 14.4 MB
        // recording streamed as read, 16 MB this way)
        const file = Bun.file(path);
        for (let at = 0; at < file.size; at += partSize) {
          await writer.write(new Uint8Array(await file.slice(at, at + partSize).arrayBuffer()));
          await writer.flush();
        }
        await writer.end();
      } catch (error) {
        // a failed multipart upload is abandoned, not left half done (a bucket rule clears what a crash leaves)
        await Promise.resolve(writer.end(error as Error)).catch(() => {});
        throw error;
      }
    },
    presign: (key, expiresInSeconds) => client.presign(key, { method: "GET", expiresIn: expiresInSeconds }),
    remove: (key) => client.delete(key),
    async removeOrganization(organizationId) {
      let removed = 0;
      for (;;) {
        const page = await client.list({ prefix: folderOf(organizationId), maxKeys: 1000 });
        const keys = (page.contents ?? []).map((object) => object.key);
        for (const key of keys) await client.delete(key);
        removed += keys.length;
        if (!page.isTruncated || keys.length === 0) return removed;
      }
    },
  };
}

/** The bucket's client when S3 settings are given (whatever RECORDING_STORE is: older objects stay readable). */
export const recordingObjectsOf = (config: Pick<Config, "recordingStore">): RecordingObjects | null =>
  config.recordingStore.s3 ? recordingObjects(config.recordingStore.s3) : null;
