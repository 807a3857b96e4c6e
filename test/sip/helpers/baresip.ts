// baresip as a real phone: headless (no audio devices), UDP on 127.0.0.1, no registration; it dials
// a number at the trunk, speaks a WAV file (aufile) and records what it hears (sndfile's dump of the
// decoded audio), then quits after `seconds` (hanging up).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeWav, parseWav, type Wav } from "../../../src/audio/wav";
import { freePort, reapWithParent } from "../../helpers/temporal";

export type PhoneCall = { trunkPort: number; dial: string; from: string; say: Int16Array; seconds: number };
export type PhoneResult = { code: number | null; heard: Wav | null; output: string };

const modules = "/usr/lib/baresip/modules";

export async function callFromBaresip(call: PhoneCall): Promise<PhoneResult> {
  const dir = mkdtempSync(join(tmpdir(), "vas-baresip-"));
  const source = join(dir, "say.wav");
  writeFileSync(source, encodeWav(call.say, 8000)); // aufile wants the codec's rate, mono S16
  const rtp = await freePort();
  const config = [
    "poll_method epoll",
    // loopback for its SDP too (else the machine's own address, which the outbound guard refuses)
    "net_interface 127.0.0.1",
    `sip_listen 127.0.0.1:${await freePort()}`,
    `audio_source aufile,${source}`,
    "audio_player aubridge,sink", // nobody reads it: the recording is the decoder's dump
    "audio_alert aubridge,sink",
    `rtp_ports ${rtp - (rtp % 2)}-${rtp - (rtp % 2) + 10}`,
    "rtp_stats no",
    `module_path ${modules}`,
    ...["g711.so", "aufile.so", "aubridge.so", "sndfile.so"].map((m) => `module ${m}`),
    "module_tmp account.so", // reads the accounts file
    "module_app menu.so", // the /dial command
    `snd_path ${dir}`,
  ];
  writeFileSync(join(dir, "config"), `${config.join("\n")}\n`);
  writeFileSync(join(dir, "accounts"), `<sip:${call.from}@127.0.0.1>;regint=0;audio_codecs=PCMU\n`);
  writeFileSync(join(dir, "contacts"), "");
  const child = spawn(
    "baresip",
    ["-f", dir, "-t", String(call.seconds), "-e", `/dial sip:${call.dial}@127.0.0.1:${call.trunkPort}`],
    {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  reapWithParent(child.pid!, "KILL");
  let output = "";
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)));
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  const dump = readdirSync(dir).find((f) => f.startsWith("dump-") && f.endsWith("-dec.wav"));
  const heard = dump ? parseWav(readFileSync(join(dir, dump))) : null;
  rmSync(dir, { recursive: true, force: true });
  return { code, heard, output };
}
