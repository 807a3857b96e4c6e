import { expect, test } from "bun:test";
import { canceledBeforeAnswer, notPlaced, outcomeOfResponse, ringTimedOut } from "../../src/sip/outbound-outcome";

test("final responses map to the contract's endedReason, the status kept", () => {
  const reason = (code: number) => outcomeOfResponse(code).endedReason;
  expect([486, 600].map(reason)).toEqual(["busy", "busy"]);
  expect([408, 480].map(reason)).toEqual(["no-answer", "no-answer"]);
  expect([404, 410, 484, 604].map(reason)).toEqual(["unreachable", "unreachable", "unreachable", "unreachable"]);
  expect(reason(603)).toBe("declined");
  for (const code of [403, 488, 500, 502, 503, 401, 407, 487])
    expect(outcomeOfResponse(code)).toEqual({ endedReason: "failed", status: "failed", sipStatus: code });
  expect(outcomeOfResponse(486)).toEqual({ endedReason: "busy", status: "completed", sipStatus: 486 });
});

test("our CANCEL at the ring time-out is no-answer; an API hang-up while ringing is canceled; silence is failed", () => {
  expect(ringTimedOut()).toEqual({ endedReason: "no-answer", status: "completed", sipStatus: 487 });
  expect(canceledBeforeAnswer(487)).toEqual({ endedReason: "canceled", status: "completed", sipStatus: 487 });
  expect(notPlaced()).toEqual({ endedReason: "failed", status: "failed", sipStatus: null });
});
