// The RTP range is shared: by the workers of one `start:bridge` and by any other bridge on the machine.
// A pool takes the ports nobody holds and says plainly when there are none left.
import { expect, test } from "bun:test";
import { bridgeWorkerEnv, loadConfig } from "../../src/config";
import { PortPool, PortsExhausted } from "../../src/media/port-pool";

/** An even UDP port whose next even port is free too (bound and let go). */
async function freeEvenPair(): Promise<number> {
  for (;;) {
    const probe = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    const port = probe.port;
    probe.close();
    if (port % 2 === 0 && port + 3 < 65536) return port;
  }
}

test("two pools on one range take the ports the other has not bound, then refuse with PortsExhausted", async () => {
  const min = await freeEvenPair();
  const max = min + 3; // two even ports
  const a = new PortPool(min, max, "127.0.0.1");
  const b = new PortPool(min, max, "127.0.0.1");
  const first = await a.bind(() => {});
  const second = await b.bind(() => {});
  expect(new Set([first.port, second.port])).toEqual(new Set([min, min + 2]));
  await expect(a.bind(() => {})).rejects.toBeInstanceOf(PortsExhausted);
  await expect(b.bind(() => {})).rejects.toThrow(`no free RTP port in ${min}..${max}`);
  b.release(second);
  expect((await a.bind(() => {})).port).toBe(second.port); // free again once released, whoever held it
});

test("every bridge worker gets the whole RTP range, not a slice", () => {
  const config = loadConfig({ BRIDGE_WORKERS: "4", RTP_PORT_MIN: "20000", RTP_PORT_MAX: "20999" });
  for (const index of [0, 3]) {
    const env = bridgeWorkerEnv(config, index, { RTP_PORT_MIN: "20000", RTP_PORT_MAX: "20999" });
    expect(loadConfig(env).bridge).toMatchObject({ rtpPortMin: 20000, rtpPortMax: 20999, workerIndex: index });
  }
});
