// The baseline's other end: a websocket server sending its wall clock every 20 ms, COUNT times.
import { wallClock } from "../../test/fakes/wall-clock";

const count = Number(process.env.COUNT ?? 100);
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (request, s) => (s.upgrade(request) ? undefined : new Response("websocket only", { status: 426 })),
  websocket: {
    open(ws) {
      let sent = 0;
      const timer = setInterval(() => {
        ws.send(String(wallClock()));
        if (++sent >= count) clearInterval(timer);
      }, 20);
    },
    message() {},
  },
});
console.log(JSON.stringify({ url: `ws://127.0.0.1:${server.port}/` }));
