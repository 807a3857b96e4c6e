// Real speech for tests: espeak-ng speaks the text, sox resamples it; results are cached on disk.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseWav } from "../../src/audio/wav";

const cacheDir = join(tmpdir(), "vas-speech-cache");

async function run(cmd: string[]) {
  const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "pipe" });
  if ((await proc.exited) !== 0) throw new Error(`${cmd[0]} failed: ${await new Response(proc.stderr).text()}`);
}

/** the files being made in this process, by cache key: concurrent asks for one text share one run */
const making = new Map<string, Promise<void>>();
let made = 0;

/** PCM16 mono of `text` spoken by espeak-ng, at `sampleRate`. */
export async function speech(text: string, sampleRate: number): Promise<Int16Array> {
  mkdirSync(cacheDir, { recursive: true });
  const key = createHash("sha256").update(`${text}|${sampleRate}`).digest("hex").slice(0, 16);
  const file = join(cacheDir, `${key}.wav`);
  if (!existsSync(file)) {
    let pending = making.get(key);
    if (!pending) {
      pending = synthesize(text, sampleRate, key, file).finally(() => making.delete(key));
      making.set(key, pending);
    }
    await pending;
  }
  return parseWav(readFileSync(file)).samples;
}

async function synthesize(text: string, sampleRate: number, key: string, file: string) {
  // names of this run's own: parallel processes (and runs) never write one file
  const own = `${key}.${process.pid}.${made++}`;
  const raw = join(cacheDir, `${own}.espeak.wav`);
  const tmp = join(cacheDir, `${own}.wav`);
  await run(["espeak-ng", "-v", "en-us", "-s", "170", "-w", raw, text]);
  await run(["sox", raw, "-r", String(sampleRate), "-c", "1", "-b", "16", "-e", "signed-integer", tmp]);
  rmSync(raw);
  renameSync(tmp, file); // atomic: nobody ever reads half a file
}

/** Digital silence of `ms` milliseconds at `sampleRate`. */
export const silence = (ms: number, sampleRate: number) => new Int16Array(Math.round((ms * sampleRate) / 1000));
