// The ports tests hand their peers: free for both protocols, with the neighbours a peer also binds.
// The OS's port for a TCP listener may still carry a UDP socket, or (for its neighbours) be the own
// port of an outgoing connection; SIPp and the bridge workers then failed at their bind in CI.
import { expect, test } from "bun:test";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { freeListenPort, freePort, portsFree } from "./temporal";

test("a port taken for UDP only, or as an outgoing connection's own port, is not free", async () => {
  const udp = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const outgoing = connect((listener.address() as { port: number }).port, "127.0.0.1");
  await new Promise((resolve) => outgoing.once("connect", resolve));
  try {
    expect(await portsFree([udp.address().port])).toBe(false);
    expect(await portsFree([outgoing.localPort!])).toBe(false);
  } finally {
    outgoing.destroy();
    listener.close();
    udp.close();
  }
});

test("freePort's port and its neighbours are free for UDP and TCP, and never handed out again", async () => {
  const port = await freePort([1, 2]);
  expect(await portsFree([port, port + 1, port + 2])).toBe(true);
  const later = await Promise.all(Array.from({ length: 50 }, () => freePort()));
  expect(later.filter((p) => p >= port && p <= port + 2)).toEqual([]);
});

test("freeListenPort's ports lie below the ephemeral range (no outgoing connection takes them), free, never twice", async () => {
  const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
  const ports = await Promise.all(Array.from({ length: 20 }, () => freeListenPort()));
  expect(new Set(ports).size).toBe(20);
  for (const port of ports) expect(port).toBeLessThan(ephemeralLow!);
  expect(await portsFree(ports)).toBe(true);
});
