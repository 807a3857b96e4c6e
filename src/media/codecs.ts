// The audio codecs we answer with: G.711 both laws (RFC 3551 static payload types), 8 kHz, 20 ms.
import { aLawDecode, aLawEncodeInto, muLawDecode, muLawEncodeInto } from "../audio/g711";

export type Codec = {
  name: "PCMU" | "PCMA";
  payloadType: number;
  clockRate: number;
  /**
   * Encodes `count` samples of `pcm` from `from` on into `out` from `offset` on (the sender's packet,
   * past the header): nothing is allocated.
   */
  encodeInto(pcm: Int16Array, out: Uint8Array, offset: number, from: number, count: number): void;
  /** A fresh frame: the call keeps caller audio (utterances, the pipeline's VAD), so it is not reused. */
  decode(payload: Uint8Array): Int16Array;
  /** One byte of silence, to fill frames when the agent is quiet. */
  silence: number;
};

export const codecs: Codec[] = [
  { name: "PCMU", payloadType: 0, clockRate: 8000, encodeInto: muLawEncodeInto, decode: muLawDecode, silence: 0xff },
  { name: "PCMA", payloadType: 8, clockRate: 8000, encodeInto: aLawEncodeInto, decode: aLawDecode, silence: 0xd5 },
];

export const codecByName = (name: string) => codecs.find((c) => c.name === name.toUpperCase()) ?? null;
export const frameSamples = 160; // 20 ms at 8 kHz
