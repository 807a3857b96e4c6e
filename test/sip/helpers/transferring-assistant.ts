// The SIP transfer tests' assistant: its fake provider says the greeting and then calls transfer_call
// to the one destination (method dial unless `parameters` say otherwise); every later instruction is
// said verbatim, and a tool output (the transfer failed) is answered with `afterFailure` if given.
import type { FakeRealtimeSession } from "../../fakes/openai-realtime-server";
import type { RtpPeer } from "./rtp-peer";
import { eventually } from "./eventually";
import type { Sipp } from "./sipp";
import type { SipWorld } from "./sip-world";
import { toneFrames } from "./tone-frames";

export type TransferringAssistant = {
  numberId: string;
  greeting: string;
  destination: string;
  /** the destination's message, spoken before the transfer (templates allowed) */
  message: string;
  parameters?: Record<string, unknown>;
  afterFailure?: string;
};

export function createTransferringAssistant(world: SipWorld, a: TransferringAssistant) {
  const { greeting, destination } = a;
  return world.createAssistant({
    numberId: a.numberId,
    greeting,
    extensions: [
      {
        type: "transfer_call",
        parameters: {
          destinations: [{ to: destination, description: "A person", message: a.message }],
          method: "dial",
          ...a.parameters,
        },
      },
    ],
    fake: {
      // the bridge asks for words said verbatim: "…word for word, and nothing else: <words>"
      onInstructions: (instructions) => {
        const words = instructions.slice(instructions.indexOf("nothing else: ") + "nothing else: ".length);
        return words === greeting
          ? { text: greeting, toolCalls: [{ name: "transfer_call", arguments: { destination } }] }
          : { text: words };
      },
      ...(a.afterFailure !== undefined && { afterToolOutputs: () => ({ text: a.afterFailure! }) }),
    },
  });
}

/**
 * The caller hangs up once the assistant, told that the transfer failed, has been heard to the end:
 * its words (the fake's stand-in speech, a 300 Hz tone) and then a second without them.
 */
export async function hangUpAfterTheAnswer(calling: Sipp, peer: RtpPeer, session: FakeRealtimeSession) {
  await eventually(() => session.toolOutputs.length > 0, "the transfer's outcome at the assistant", 40_000);
  const from = peer.heard().length;
  await eventually(
    () => {
      const after = peer.heard().subarray(from);
      return toneFrames(after, 300) >= 10 && toneFrames(after.subarray(-8000), 300) === 0;
    },
    "the assistant's answer heard",
    20_000,
  );
  await calling.hangUp();
}
