// Chooses the voice engine adapter by the strategy's type.
import type { VoiceSession, VoiceSessionOptions, VoiceStrategy } from "./engine";
import { UnknownStrategyTypeError } from "./engine";
import { connectOpenAiRealtime } from "./openai-realtime";
import { connectPipeline } from "./pipeline/connect-pipeline";
import { timeVoiceConnect } from "../metrics/metrics";

type Adapter = (parameters: Record<string, unknown>, options: VoiceSessionOptions) => Promise<VoiceSession>;

const adapters: Record<string, Adapter> = {
  openai_realtime: connectOpenAiRealtime,
  pipeline: connectPipeline,
};

/**
 * Starts a conversation; resolves once the provider is ready (the greeting is already requested).
 * Rejects with UnknownStrategyTypeError or VoiceConnectError: the bridge fails the call with it.
 */
export async function createVoiceSession(strategy: VoiceStrategy, options: VoiceSessionOptions): Promise<VoiceSession> {
  const adapter = Object.hasOwn(adapters, strategy.type) ? adapters[strategy.type] : undefined;
  if (!adapter) throw new UnknownStrategyTypeError(strategy.type);
  return timeVoiceConnect(strategy.type, adapter(strategy.parameters ?? {}, options));
}
