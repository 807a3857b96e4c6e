// Loaded first into a service process (Bun: BUN_OPTIONS=--preload, Node: NODE_OPTIONS=--import) by
// test/outage/unhandled-rejections.test.ts: SIGUSR2 makes a promise rejection nobody handles, as a
// bug would. Plain JavaScript, so that Node loads it before tsx.
process.on("SIGUSR2", () => {
  void Promise.reject(new Error(`rejected on purpose (pid ${process.pid})`));
});
