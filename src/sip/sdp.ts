// SDP offer/answer (RFC 3264) for plain RTP audio: we answer one G.711 codec, the first the caller
// offers, plus telephone-event when offered; hold shows up as a direction (or the old c=0.0.0.0).
import { codecByName, codecs, type Codec } from "../media/codecs";

export type Direction = "sendrecv" | "sendonly" | "recvonly" | "inactive";
/** The old way to put a call on hold (RFC 2543): nothing is sent to it. */
export const holdAddress = "0.0.0.0";
const directions: Direction[] = ["sendrecv", "sendonly", "recvonly", "inactive"];

export type SdpOffer = {
  address: string;
  port: number;
  formats: number[];
  rtpmap: Map<number, string>;
  direction: Direction;
};

/** The first audio stream of an SDP body, or null when there is none. */
export function parseSdp(body: string): SdpOffer | null {
  let address = "";
  let media: SdpOffer | null = null;
  let sessionDirection: Direction = "sendrecv";
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    const value = line.slice(2);
    if (line.startsWith("m=")) {
      if (media) break; // only the first audio stream is ours
      const [kind, port, , ...formats] = value.split(/\s+/);
      if (kind !== "audio") continue;
      media = {
        address,
        port: Number(port),
        formats: formats.map(Number).filter(Number.isInteger),
        rtpmap: new Map(),
        direction: sessionDirection,
      };
    } else if (line.startsWith("c=")) {
      const connection = value.split(/\s+/)[2] ?? "";
      if (media) media.address = connection;
      else address = connection;
    } else if (line.startsWith("a=rtpmap:") && media) {
      const [pt, encoding] = line.slice(9).split(/\s+/);
      media.rtpmap.set(Number(pt), encoding ?? "");
    } else if (directions.includes(line.slice(2) as Direction)) {
      if (media) media.direction = line.slice(2) as Direction;
      else sessionDirection = line.slice(2) as Direction;
    }
  }
  if (!media || !Number.isInteger(media.port) || !media.address) return null;
  return media;
}

export type Negotiated = {
  codec: Codec;
  dtmfPayloadType: number | null;
  address: string;
  port: number;
  /** The caller sends us audio / wants ours (hold turns one or both off). */
  receiving: boolean;
  sending: boolean;
  direction: Direction;
};

const answerDirection: Record<Direction, Direction> = {
  sendrecv: "sendrecv",
  sendonly: "recvonly",
  recvonly: "sendonly",
  inactive: "inactive",
};

/** Our side of the offer, or null when we share no codec (488). */
export function negotiate(offer: SdpOffer): Negotiated | null {
  const encodingOf = (pt: number) =>
    offer.rtpmap.get(pt)?.split("/")[0] ?? (pt === 0 ? "PCMU" : pt === 8 ? "PCMA" : "");
  const pt = offer.formats.find((f) => codecByName(encodingOf(f)));
  if (pt === undefined) return null;
  const codec = codecByName(encodingOf(pt))!;
  const dtmf = offer.formats.find((f) => offer.rtpmap.get(f)?.toLowerCase().startsWith("telephone-event/8000"));
  const nullAddress = offer.address === holdAddress || offer.port === 0;
  const direction = nullAddress && offer.direction === "sendrecv" ? "sendonly" : offer.direction;
  return {
    codec: { ...codec, payloadType: pt },
    dtmfPayloadType: dtmf ?? null,
    address: offer.address,
    port: offer.port,
    receiving: direction === "sendrecv" || direction === "sendonly",
    sending: !nullAddress && (direction === "sendrecv" || direction === "recvonly"),
    direction: answerDirection[direction],
  };
}

export type SdpOrigin = { sessionId: string; version: number; host: string; port: number };

/** Our answer: one codec, telephone-event if the caller offered it. */
export function buildAnswer(
  origin: SdpOrigin,
  negotiated: Pick<Negotiated, "codec" | "dtmfPayloadType" | "direction">,
): string {
  const { codec, dtmfPayloadType } = negotiated;
  const formats = [codec.payloadType, ...(dtmfPayloadType === null ? [] : [dtmfPayloadType])];
  const lines = [`a=rtpmap:${codec.payloadType} ${codec.name}/8000`];
  if (dtmfPayloadType !== null)
    lines.push(`a=rtpmap:${dtmfPayloadType} telephone-event/8000`, `a=fmtp:${dtmfPayloadType} 0-15`);
  return body(origin, formats, lines, negotiated.direction);
}

/** Our offer when the INVITE came without SDP (late offer) or a re-INVITE asks for one. */
export function buildOffer(origin: SdpOrigin): string {
  const lines = codecs.map((c) => `a=rtpmap:${c.payloadType} ${c.name}/8000`);
  lines.push("a=rtpmap:101 telephone-event/8000", "a=fmtp:101 0-15");
  return body(origin, [...codecs.map((c) => c.payloadType), 101], lines, "sendrecv");
}

function body(origin: SdpOrigin, formats: number[], attributes: string[], direction: Direction): string {
  return [
    "v=0",
    `o=- ${origin.sessionId} ${origin.version} IN IP4 ${origin.host}`,
    "s=-",
    `c=IN IP4 ${origin.host}`,
    "t=0 0",
    `m=audio ${origin.port} RTP/AVP ${formats.join(" ")}`,
    ...attributes,
    "a=ptime:20",
    `a=${direction}`,
    "",
  ].join("\r\n");
}
