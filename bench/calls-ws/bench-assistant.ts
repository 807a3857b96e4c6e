// The assistant both websocket benches call: a tenant, the fake Realtime strategy and an assistant
// with a short greeting; `extra` adds fields (e.g. hooks) to the assistant.
import { createTenant } from "../../test/helpers/api";

export async function createBenchAssistant(apiUrl: string, extra: Record<string, unknown> = {}) {
  const tenant = await createTenant(apiUrl, "bench");
  const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
    name: "fake",
    type: "openai_realtime",
    parameters: { vad: { stopDuration: 400 } },
  });
  const assistant = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "bench",
    systemPromptGreeting: "x",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    ...extra,
  });
  return { tenant, assistantId: assistant.body.data.id as string };
}
