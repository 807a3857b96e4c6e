// A callee on a UDP socket in the bench's own process: notes when each INVITE arrives
// (performance.now()) and answers 486 at once, so that nothing but our side is timed.
import { createSocket } from "node:dgram";
import { freePort } from "../../test/helpers/temporal";

export async function startScriptUas() {
  const socket = createSocket("udp4");
  const port = await freePort();
  await new Promise<void>((r) => socket.bind(port, "127.0.0.1", r));
  const arrivals: number[] = [];
  socket.on("message", (msg, from) => {
    const text = msg.toString();
    if (!text.startsWith("INVITE ")) return;
    arrivals.push(performance.now());
    const headers = text.split("\r\n").filter((l) => /^(via|from|to|call-id|cseq):/i.test(l));
    const reply = [
      "SIP/2.0 486 Busy Here",
      ...headers.map((h) => (/^to:/i.test(h) && !/;tag=/.test(h) ? `${h};tag=bench` : h)),
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    socket.send(reply, from.port, from.address);
  });
  return { port, arrivals, close: () => socket.close() };
}
