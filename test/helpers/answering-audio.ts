// What a dialled callee sends after answering, made with espeak-ng and sox (test/helpers/speech):
// people answering short, answering machines' greetings with and without a beep. Used by the voicemail
// detector's tests, the end-to-end voicemail call and `bun run bench voicemail`.
import { muLawDecode, muLawEncode } from "../../src/audio/g711";
import { silence, speech } from "./speech";

export type AnswerKind = "human" | "machine";
export type AnswerClip = {
  name: string;
  kind: AnswerKind;
  samples: Int16Array;
  /** machine with a beep: where the beep ends (ms from the answer) */
  beepEndMs: number | null;
  /** where the speech ends (ms from the answer) */
  speechEndMs: number;
};

/** A sine beep: `hz` for `ms`, 5 ms fades (as answering machines play it). */
export function beep(hz: number, ms: number, sampleRate: number, amplitude = 8000): Int16Array {
  const n = Math.round((ms * sampleRate) / 1000);
  const fade = Math.round(sampleRate / 200);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const envelope = Math.min(1, i / fade, (n - 1 - i) / fade);
    out[i] = Math.round(amplitude * envelope * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  }
  return out;
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Through the phone line: a little noise (seeded, so runs compare) and PCMU's quantization. */
export function overTheLine(samples: Int16Array, seed = 1, noiseRms = 60): Int16Array {
  let state = seed;
  const noisy = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    const noise = ((state / 0x7fffffff) * 2 - 1) * noiseRms * Math.SQRT2 * 1.2;
    noisy[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! + noise)));
  }
  return muLawDecode(muLawEncode(noisy));
}

const humans = [
  "Hello?",
  "Yes?",
  "Hi, this is Sam.",
  "Speaking.",
  "Hello, who is this?",
  "Hey.",
  "Good morning.",
  "Hello, Acme sales.",
  "Yeah, hello?",
  "This is Maria.",
  // a business answering with a full sentence: talks on like a greeting (AMD's known weak spot)
  "Good afternoon, thank you for calling Acme dental, this is Jenny speaking, how can I help you?",
];

const greetings = [
  "Hi, you have reached John. I can't take your call right now, please leave a message after the tone.",
  "The person you are calling is not available. Please leave your message after the beep.",
  "Hello, this is Maria's phone. Leave me a message and I will call you back as soon as I can.",
  "Thank you for calling Acme. Our office is closed. Please leave your name and number after the tone.",
  "You've reached the voicemail of Sam Lee. Please leave a message.",
  "Hi, it's Pat. Sorry I missed you. Leave a message.",
  "The number you have dialed is not available. At the tone, please record your message.",
  "Hey, this is Chris, I'm away from my phone, so leave a message and I'll get back to you.",
  "Welcome to the voice mailbox of Doctor Jones. Please leave a detailed message after the tone.",
  "Hello. Nobody can come to the phone right now. Please leave a message after the beep. Thank you.",
];

// short greetings: the beep decides
const shortGreetings = ["Leave a message.", "Sam Lee."];

const beepHz = [1000, 1400, 850, 1000, 1900, 1200, 1000, 950, 1400, 1600];

/** The labelled set at 8 kHz: 11 people, a silent callee, 10 greetings with a beep and 10 without, 2 short ones with a beep. */
export async function answeringClips(sampleRate = 8000): Promise<AnswerClip[]> {
  const clips: AnswerClip[] = [];
  const lead = (i: number) => silence(200 + ((i * 137) % 600), sampleRate);
  for (const [i, text] of humans.entries()) {
    const said = await speech(text, sampleRate);
    const head = concat(lead(i), said);
    // a second "Hello?" for some: a person who hears nothing asks again
    const again = i % 3 === 0 ? concat(silence(1500, sampleRate), said) : new Int16Array(0);
    const samples = concat(head, again, silence(3000, sampleRate));
    clips.push({
      name: `human: ${text}`,
      kind: "human",
      samples,
      beepEndMs: null,
      speechEndMs: msOf(head, sampleRate),
    });
  }
  clips.push({
    name: "human: silent",
    kind: "human",
    samples: silence(6000, sampleRate),
    beepEndMs: null,
    speechEndMs: 0,
  });
  for (const [i, text] of greetings.entries()) {
    const said = concat(lead(i), await speech(text, sampleRate));
    const withBeep = concat(said, silence(400, sampleRate), beep(beepHz[i]!, 300 + (i % 3) * 150, sampleRate));
    clips.push({
      name: `machine+beep ${beepHz[i]} Hz: ${text}`,
      kind: "machine",
      samples: concat(withBeep, silence(3000, sampleRate)),
      beepEndMs: msOf(withBeep, sampleRate),
      speechEndMs: msOf(said, sampleRate),
    });
    clips.push({
      name: `machine: ${text}`,
      kind: "machine",
      samples: concat(said, silence(3000, sampleRate)),
      beepEndMs: null,
      speechEndMs: msOf(said, sampleRate),
    });
  }
  for (const [i, text] of shortGreetings.entries()) {
    const said = concat(lead(i), await speech(text, sampleRate));
    const withBeep = concat(said, silence(300, sampleRate), beep(1000, 500, sampleRate));
    clips.push({
      name: `machine, short + beep: ${text}`,
      kind: "machine",
      samples: concat(withBeep, silence(3000, sampleRate)),
      beepEndMs: msOf(withBeep, sampleRate),
      speechEndMs: msOf(said, sampleRate),
    });
  }
  return clips.map((clip, i) => ({ ...clip, samples: overTheLine(clip.samples, i + 1) }));
}

const msOf = (samples: Int16Array, sampleRate: number) => Math.round((samples.length * 1000) / sampleRate);
