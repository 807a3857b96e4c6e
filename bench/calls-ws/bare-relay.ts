// The floor beside the bridge's websocket calls (issue 44): a websocket server that says "ready" and
// sends every frame it receives straight back, nothing else (no provider, no engine, no database).
// Pinned like the bridge and fed by the same callers, its CPU per call is what the sockets alone cost.
//   bun bench/calls-ws/bare-relay.ts   prints {"url":"ws://…"}
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request, srv) {
    return srv.upgrade(request) ? undefined : new Response("websocket only", { status: 426 });
  },
  websocket: {
    open(ws) {
      ws.send(JSON.stringify({ type: "ready" }));
    },
    message(ws, frame) {
      ws.send(frame);
    },
  },
});
console.log(JSON.stringify({ url: `ws://127.0.0.1:${server.port}/` }));
