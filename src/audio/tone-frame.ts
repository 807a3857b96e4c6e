// Is one short frame of audio a pure tone (an answering machine's beep)? Goertzel filters across a band
// find the strongest frequency and how much of the frame's energy it holds: a beep puts nearly all of
// it in one frequency, speech spreads it over harmonics and formants.

export type ToneBand = { lowHz: number; highHz: number; stepHz: number };

/** The beeps of voicemail systems sit here (1 kHz and 1.4 kHz are the usual ones). */
export const beepBand: ToneBand = { lowHz: 800, highHz: 2000, stepHz: 25 };

export type ToneFrame = {
  /** the strongest frequency in the band */
  hz: number;
  /** its share of the frame's energy, 0..1 (a pure tone on the frequency: about 1) */
  purity: number;
};

/** The strongest frequency of `band` in `frame` and its share of the frame's energy. */
export function strongestTone(frame: Int16Array, sampleRate: number, band: ToneBand = beepBand): ToneFrame {
  const n = frame.length;
  let energy = 0;
  for (let i = 0; i < n; i++) energy += frame[i]! * frame[i]!;
  if (energy === 0 || n === 0) return { hz: 0, purity: 0 };
  let best = { hz: 0, power: 0 };
  for (let hz = band.lowHz; hz <= band.highHz; hz += band.stepHz) {
    const power = goertzelPower(frame, (2 * Math.PI * hz) / sampleRate);
    if (power > best.power) best = { hz, power };
  }
  // a sine of amplitude A on the frequency: power (A·n/2)², energy A²·n/2, so 2·power/(n·energy) = 1
  return { hz: best.hz, purity: Math.min(1, (2 * best.power) / (n * energy)) };
}

/** |X(ω)|² of the frame at angular frequency ω (radians per sample). */
function goertzelPower(frame: Int16Array, omega: number): number {
  const coeff = 2 * Math.cos(omega);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < frame.length; i++) {
    const s0 = frame[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}
