// What the caller's RTCP reports said of a SIP call's audio (jitter, loss, round trip), kept on the
// call's agent task once the call is over.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { agentTasks } from "../db/schema";
import { describeError } from "../errors";
import { log } from "../log";
import type { CallerQuality } from "../media/rtcp-reporter";

export async function recordCallerQuality(db: Db, callId: string, quality: CallerQuality) {
  try {
    await db
      .update(agentTasks)
      .set({ callerJitterMs: quality.jitterMs, callerPacketsLost: quality.packetsLost, roundTripMs: quality.rttMs })
      .where(eq(agentTasks.callId, callId));
  } catch (error) {
    log.warn("call quality not recorded", { callId, error: describeError(error) });
  }
}
