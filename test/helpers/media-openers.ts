// The two places a SIP call's RTP can run, for tests that must hold for both: this event loop, and the
// media thread. Each gets its own slice of ports (per process, so parallel test files do not collide).
import type { MediaTarget, OpenMedia } from "../../src/media/call-media";
import { codecByName } from "../../src/media/codecs";
import { startMediaThread } from "../../src/media/media-thread";
import { PortPool } from "../../src/media/port-pool";
import { openInProcess } from "../../src/media/rtp-session";

export type MediaOpeners = { where: string; open: OpenMedia; stop(): Promise<void> }[];

/** `base`: the first of 2,000 ports to use; the thread gets the upper half. `allowCidrs`: what RTP may latch to. */
export function mediaOpeners(base: number, leadMs = 60, allowCidrs = ["127.0.0.0/8"]): MediaOpeners {
  const min = base + (process.pid % 250) * 2;
  const thread = startMediaThread({
    portMin: min + 1_000,
    portMax: min + 1_499,
    hostname: "127.0.0.1",
    leadMs,
    allowCidrs,
  });
  return [
    {
      where: "in the event loop",
      open: openInProcess(new PortPool(min, min + 499, "127.0.0.1"), allowCidrs),
      stop: async () => {},
    },
    { where: "on the media thread", open: thread.open, stop: () => thread.stop() },
  ];
}

/** A PCMU caller on 127.0.0.1 at `port`, sending and receiving, as a negotiation would settle it. */
export const pcmuCaller = (port: number, dtmfPayloadType: number | null = null): MediaTarget => ({
  address: "127.0.0.1",
  port,
  codec: codecByName("PCMU")!,
  dtmfPayloadType,
  receiving: true,
  sending: true,
});
