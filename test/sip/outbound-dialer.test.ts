// Issue 40 item 7: an outbound call whose end could not be written (its `done` rejects once closing
// failed repeatedly) is logged and forgotten by the dialer; no promise is left rejecting unhandled,
// which would end the bridge worker and every call on it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { OutboundCall } from "../../src/sip/outbound-call";
import { OutboundDialer } from "../../src/sip/outbound-dialer";
import { startCredentialFixtures } from "./helpers/credentials";
import { eventually } from "./helpers/eventually";

let fixtures: Awaited<ReturnType<typeof startCredentialFixtures>>;
beforeAll(async () => {
  fixtures = await startCredentialFixtures("outbound-dialer");
});
afterAll(async () => {
  await fixtures?.stop();
});

/** A call as the dialer sees one; `fail` rejects its `done` as a close that kept failing does. */
function placedCall() {
  let fail!: (error: Error) => void;
  const done = new Promise<void>((_, reject) => (fail = reject));
  const hangups: number[] = [];
  const call = { done, hangup: () => void hangups.push(1) } as unknown as OutboundCall;
  return { call, fail, hangups };
}

/** Resolves after every callback already due (rejection tracking runs once the microtasks are done). */
const nextTurns = async () => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

test("a call whose end could not be written is forgotten, and its rejection is handled", async () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", record);
  try {
    const bridgeId = `dialer-${process.pid}`;
    const credentialId = await fixtures.createCredential();
    const assistantId = await fixtures.createAssistant(await fixtures.createNumber(credentialId, "+15550199"));
    const callId = await fixtures.offerOutboundTask(credentialId, assistantId, bridgeId);
    const placed = placedCall();
    const dialled: string[] = [];
    const dialer = new OutboundDialer(fixtures.db, bridgeId, (task) => {
      dialled.push(task.callId);
      return placed.call;
    });

    dialer.request();
    await eventually(() => dialled.length === 1, "the offered call placed");
    expect(dialled).toEqual([callId]);
    // while it runs, an API hang-up reaches it
    await dialer.hangup(callId);
    expect(placed.hangups).toHaveLength(1);

    placed.fail(new Error("the call's end could not be written"));
    await nextTurns();
    expect(unhandled).toEqual([]);
    // forgotten: a hang-up now looks for an unclaimed task (there is none) instead of reaching the call
    await dialer.hangup(callId);
    expect(placed.hangups).toHaveLength(1);
    await dialer.stop();
  } finally {
    process.off("unhandledRejection", record);
  }
});
