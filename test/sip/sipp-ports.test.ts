// SIPp picks its own media ports (the test helpers pass no -mp): with the ports it starts its search
// from held, a caller (runSipp) and a callee (startSippUas) still start and complete a call. Given -mp,
// SIPp exits at once when that port or port + 2 is taken (commit 95d3202), a race with whatever binds
// between the test's check and SIPp's bind.
import { afterAll, expect, test } from "bun:test";
import { createSocket, type Socket } from "node:dgram";
import { runSipp, uacCallVars } from "./helpers/sipp";
import { startSippUas, uasEnding } from "./helpers/sipp-uas";

const held: Socket[] = [];
afterAll(() => {
  for (const socket of held) socket.close();
});

/** Binds UDP `port` on the loopback if it is free (if not, someone else holds it: the same for SIPp). */
const hold = (port: number) =>
  new Promise<void>((resolve) => {
    const socket = createSocket("udp4");
    socket.once("error", () => resolve());
    socket.bind(port, "127.0.0.1", () => {
      held.push(socket);
      resolve();
    });
  });

test("with SIPp's default media ports (6000 and on) taken, a SIPp caller calls a SIPp callee", async () => {
  for (let port = 6000; port < 6012; port += 2) await hold(port);
  const callee = await startSippUas("uas-answer.xml", { RTP_PORT: 9, RING_MS: 0, ENDING: uasEnding.awaitBye });
  const caller = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: callee.port,
    service: "callee",
    vars: uacCallVars(9, 200),
  });
  const answered = await callee.result;
  expect(caller.code, caller.output).toBe(0);
  expect(caller.logs.join("\n")).toContain("ANSWERED");
  expect(answered.code, answered.output).toBe(0);
  // what the helpers no longer do: SIPp told to use a taken port gives up before it calls
  const pinned = await runSipp({
    scenario: "uac-call.xml",
    trunkPort: callee.port,
    service: "callee",
    vars: uacCallVars(9, 200),
    extra: ["-mp", "6000"],
  });
  expect(pinned.code).not.toBe(0);
  expect(pinned.messages).toBe("");
});
