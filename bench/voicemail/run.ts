// `bun run bench voicemail`: the voicemail detector's accuracy and decision time on a labelled set made
// now with espeak-ng and sox (cached in the temp dir): people answering short, greetings with and
// without a beep, all through a noisy PCMU line. Each clip is fed in 20 ms frames as RTP brings it.
// Prints every clip's verdict, the confusion, accuracy, decision time p50/p99 (from the answer) and,
// for machines, when the message would start against where the beep or the greeting ended.
import { VoicemailDetector, type VoicemailEvent } from "../../src/calls/voicemail-detector";
import { answeringClips } from "../../test/helpers/answering-audio";
import { percentile } from "../lib/harness";

const say = (msg: string) => console.error(`[bench/voicemail] ${msg}`);
const sampleRate = 8000;
const frame = sampleRate / 50;

say("making the clips (espeak-ng + sox, cached)…");
const clips = await answeringClips(sampleRate);
say(`${clips.length} clips`);

const confusion = { human: { human: 0, machine: 0 }, machine: { human: 0, machine: 0 } };
const decisionMs: number[] = [];
const messageLateMs: number[] = [];
let cpuMs = 0;
let audioMs = 0;
for (const clip of clips) {
  const detector = new VoicemailDetector(sampleRate);
  const events: VoicemailEvent[] = [];
  const began = performance.now();
  for (let i = 0; i < clip.samples.length && !detector.finished; i += frame)
    events.push(...detector.feed(clip.samples.subarray(i, i + frame)));
  cpuMs += performance.now() - began;
  audioMs += (clip.samples.length * 1000) / sampleRate;
  const verdict = events.find((e) => e.type === "human" || e.type === "machine");
  const got = verdict?.type === "machine" ? "machine" : "human";
  confusion[clip.kind][got]++;
  if (verdict) decisionMs.push(verdict.atMs);
  const ready = events.find((e) => e.type === "message-ready");
  // how long after the beep's end (or the greeting's end) the message starts: negative = too early
  const expected = clip.beepEndMs ?? clip.speechEndMs;
  if (ready && clip.kind === "machine") messageLateMs.push(ready.atMs - expected);
  const mark = got === clip.kind ? "ok  " : "MISS";
  const why = verdict && "reason" in verdict ? verdict.reason : "-";
  const msg = ready ? ` message at ${ready.atMs} ms (${ready.atMs - expected} after the end)` : "";
  say(`${mark} ${got.padEnd(7)} ${why.padEnd(13)} ${String(verdict?.atMs ?? "-").padStart(5)} ms  ${clip.name}${msg}`);
}

const right = confusion.human.human + confusion.machine.machine;
console.log("\nconfusion (rows: truth, columns: verdict)");
console.table(confusion);
console.log(`accuracy: ${right}/${clips.length} = ${((100 * right) / clips.length).toFixed(1)}%`);
console.log(
  `decision time from the answer: p50 ${percentile(decisionMs, 50)} ms, p99 ${percentile(decisionMs, 99)} ms`,
);
if (messageLateMs.length)
  console.log(
    `message start after the beep / greeting end: p50 ${percentile(messageLateMs, 50)} ms, min ${Math.min(...messageLateMs)} ms, max ${Math.max(...messageLateMs)} ms`,
  );
console.log(
  `detector cost: ${((100 * cpuMs) / audioMs).toFixed(3)}% of one core per call (${cpuMs.toFixed(0)} ms for ${(audioMs / 1000).toFixed(0)} s of audio)`,
);
