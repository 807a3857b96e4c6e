// The floor beside the bridge (issue 44): N UDP sockets that send every packet they receive straight
// back to its sender, nothing else (no codec, no engine, no SIP). Pinned like the bridge and fed the
// same calls' RTP by the same callers, its CPU per call is what receiving and sending the packets
// alone costs on that core.
//   CALLS=<n> bun bench/calls-sip/bare-relay.ts   prints {"ports":[…]} once every socket is bound
const calls = Number(process.env.CALLS);
const ports: number[] = [];
for (let port = 44_000 + (process.pid % 100) * 2; ports.length < calls && port < 64_000; port += 2) {
  try {
    const socket = await Bun.udpSocket({
      hostname: "127.0.0.1",
      port,
      socket: {
        data(s, data, fromPort, fromAddress) {
          s.send(data, fromPort, fromAddress);
        },
        error() {},
      },
    });
    ports.push(socket.port);
  } catch {
    // taken: the next even port
  }
}
console.log(JSON.stringify({ ports }));
export {}; // a module: top-level await
