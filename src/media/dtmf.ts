// RFC 4733 telephone-events: every packet of one key press shares its RTP timestamp, and the end
// packet (E bit) is usually sent three times, so a digit is reported once per timestamp, at its end.
const events = "0123456789*#ABCD";

export function dtmfDigit(event: number): string | null {
  return events[event] ?? null;
}

export class DtmfDecoder {
  private lastTimestamp: number | null = null;

  /** The digit this packet completes, or null (not an event, a repeat, or not finished yet). */
  decode(payload: Uint8Array, timestamp: number): string | null {
    const [event, flags] = payload;
    if (payload.length < 4 || event === undefined || flags === undefined) return null;
    const end = (flags & 0x80) !== 0;
    if (!end || timestamp === this.lastTimestamp) return null;
    this.lastTimestamp = timestamp;
    return dtmfDigit(event);
  }
}

/** Gathers key presses into one entry ("123#"): sent after a pause, or at once on # . */
export class DigitCollector {
  private digits = "";
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly onDigits: (digits: string) => void,
    private readonly pauseMs = 1500,
  ) {}

  push(digit: string) {
    this.digits += digit;
    if (this.timer) clearTimeout(this.timer);
    if (digit === "#") this.flush();
    else this.timer = setTimeout(() => this.flush(), this.pauseMs);
  }

  flush() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const digits = this.digits;
    this.digits = "";
    if (digits) this.onDigits(digits);
  }
}
