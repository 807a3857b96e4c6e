// A runnable caller for the bridge's own wire format: streams a WAV file in real time (20 ms frames,
// then silence), prints transcripts, and saves what the assistant said to a WAV file.
//   bun examples/ws-client.ts --url ws://127.0.0.1:3001 --assistant <id> --token <api token> \
//       --in question.wav [--out reply.wav] [--rate 16000] [--seconds 20]
// The input must be PCM16 mono; it is played at its own rate if that is 8000, 16000 or 24000 Hz.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { concatPcm } from "../src/audio/pcm";
import { encodeWav, parseWav } from "../src/audio/wav";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "ws://127.0.0.1:3001" },
    assistant: { type: "string" },
    agent: { type: "string" },
    token: { type: "string", default: process.env.API_TOKEN },
    in: { type: "string" },
    out: { type: "string", default: "reply.wav" },
    seconds: { type: "string", default: "20" },
  },
});
if (!values.token || !(values.assistant || values.agent) || !values.in) {
  console.error(
    "usage: bun examples/ws-client.ts --assistant <id> | --agent <id> --token <token> --in <file.wav> [--out reply.wav]",
  );
  process.exit(2);
}
const input = parseWav(readFileSync(values.in));
const rate = input.sampleRate;
const frameSamples = rate / 50;
const query = new URLSearchParams({
  sampleRate: String(rate),
  ...(values.assistant ? { assistantId: values.assistant } : { agentId: values.agent! }),
});
// a browser cannot set headers, so it would pass &token=...; here the header keeps it out of URLs
// Bun's WebSocket takes headers (its own overload of the constructor)
const ws = new WebSocket(`${values.url}/v1/calls?${query}`, {
  headers: { Authorization: `Bearer ${values.token}` },
});
ws.binaryType = "arraybuffer";
const heard: Int16Array[] = [];
let timer: ReturnType<typeof setInterval> | undefined;

ws.onmessage = (event) => {
  if (typeof event.data !== "string") return void heard.push(new Int16Array(event.data as ArrayBuffer));
  const message = JSON.parse(event.data);
  if (message.type === "ready") {
    console.log(`call ${message.callId} connected at ${message.sampleRate} Hz`);
    timer = stream();
  } else if (message.type === "transcript" && message.final) console.log(`${message.role}: ${message.text}`);
  else if (message.type === "error") console.error(`error: ${message.message}`);
  else if (message.type === "ended") console.log(`call ended: ${message.reason}`);
};
ws.onclose = (event) => {
  clearInterval(timer);
  if (event.code !== 1000) console.error(`closed with ${event.code} ${event.reason}`);
  writeFileSync(values.out!, encodeWav(concatPcm(heard), rate));
  console.log(`saved ${(heard.length * 0.02).toFixed(1)} s of agent audio to ${values.out}`);
  process.exit(0);
};

/** Sends the file then silence, one 20 ms frame per 20 ms of wall clock, and hangs up at the end. */
function stream() {
  const started = performance.now();
  const total = Math.round(Number(values.seconds) * 50);
  let sent = 0;
  return setInterval(() => {
    while (sent * 20 <= performance.now() - started && sent < total) {
      const frame = new Int16Array(frameSamples);
      frame.set(input.samples.subarray(sent * frameSamples, (sent + 1) * frameSamples));
      ws.send(frame);
      sent++;
    }
    if (sent >= total) {
      clearInterval(timer);
      ws.send(JSON.stringify({ type: "hangup" }));
    }
  }, 5);
}
