// The pipeline benches' set-up: the fake providers in their own process (fake-providers.ts, told by
// `providerEnv`) and one bridge process (`bun src/bridge/main.ts`) pointed at them, on the SUT cores
// when the bench splits them (bench/lib/pinning.ts).
import { freePort } from "../../test/helpers/temporal";
import type { createBench } from "../lib/harness";

export async function startPipelineBridge(
  spawnBun: ReturnType<typeof createBench>["spawnBun"],
  providerEnv: Record<string, string>,
) {
  const providers = await spawnBun("bench/pipeline/fake-providers.ts", providerEnv, (l) => l.includes('"timings"'));
  const urls = JSON.parse(providers.line) as { stt: string; tts: string; llm: string; timings: string };
  const port = await freePort();
  const bridge = await spawnBun(
    "src/bridge/main.ts",
    {
      BRIDGE_PORT: String(port),
      DEEPGRAM_URL: urls.stt,
      ELEVENLABS_URL: urls.tts,
      OPENAI_BASE_URL: urls.llm,
      LOG_LEVEL: "info",
    },
    (l) => l.includes("bridge listening"),
    undefined,
    "sut",
  );
  return { urls, bridge, url: `ws://127.0.0.1:${port}` };
}
