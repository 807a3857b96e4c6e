import { expect, test } from "bun:test";
import { inviteVariables } from "../../src/sip/invite-variables";

test("X- headers become variables named in lowercase with underscores; other headers do not", () => {
  const headers = {
    "X-Customer-Id": [{ raw: " C-77 " }, { raw: "C-78" }],
    "X-Caller-Tier": [{ raw: "gold" }],
    From: [{ raw: "<sip:+1555@example.com>" }],
    "Xylophone-Mode": [{ raw: "loud" }],
    "X-": [{ raw: "nameless" }],
  };
  expect(inviteVariables({ headers })).toEqual({ x_customer_id: "C-77", x_caller_tier: "gold" });
});
