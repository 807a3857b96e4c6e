// The call page's recording. The console fetches it with the token (a media element cannot send one):
// from Postgres the API answers with the audio; from object storage (RECORDING_STORE=s3) it answers 302
// to a presigned URL on the bucket, which the fetch follows cross-origin. That second request needs the
// bucket's CORS rules to allow GET from the console's origin (docs/operations.md); without them, or
// with the bucket unreachable from this browser, the fetch fails with no reason given, so the player
// says what to check instead of staying silent.
import { ApiError, blob } from "./api";
import { h } from "./dom";

export function recordingPlayer(agentTaskId: string): HTMLElement {
  const audio = h("audio", { id: "recording", controls: true });
  blob("/agent-tasks/{agentTaskId}/recording", { agentTaskId }).then(
    (b) => {
      audio.src = URL.createObjectURL(b);
    },
    (error: unknown) => audio.replaceWith(unavailable(error)),
  );
  return audio;
}

const unavailable = (error: unknown) =>
  h(
    "p",
    { className: "error", id: "recording-error" },
    error instanceof ApiError
      ? `The recording could not be loaded (${error.message}).`
      : `The recording could not be loaded from its object store. Its bucket must allow GET from ${location.origin} in its CORS rules, and its endpoint must be reachable from this browser (docs/operations.md, "Recordings in object storage").`,
  );
