// The audio codecs we answer with: G.711 both laws (RFC 3551 static payload types), 8 kHz, 20 ms.
import { aLawDecode, aLawEncode, muLawDecode, muLawEncode } from "../audio/g711";

export type Codec = {
  name: "PCMU" | "PCMA";
  payloadType: number;
  clockRate: number;
  encode(pcm: Int16Array): Uint8Array;
  decode(payload: Uint8Array): Int16Array;
  /** One byte of silence, to fill frames when the agent is quiet. */
  silence: number;
};

export const codecs: Codec[] = [
  { name: "PCMU", payloadType: 0, clockRate: 8000, encode: muLawEncode, decode: muLawDecode, silence: 0xff },
  { name: "PCMA", payloadType: 8, clockRate: 8000, encode: aLawEncode, decode: aLawDecode, silence: 0xd5 },
];

export const codecByName = (name: string) => codecs.find((c) => c.name === name.toUpperCase()) ?? null;
export const frameSamples = 160; // 20 ms at 8 kHz
