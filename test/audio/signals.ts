// Synthetic test signals and measurements shared by the audio and voice tests.

export function sine(frequency: number, sampleRate: number, seconds: number, amplitude = 10000): Int16Array {
  const n = Math.round(sampleRate * seconds);
  return Int16Array.from({ length: n }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate)),
  );
}

/** Frequency estimated from rising zero crossings, with linear interpolation between samples. */
export function estimateFrequency(samples: Int16Array, sampleRate: number): number {
  const crossings: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const before = samples[i - 1]!;
    const after = samples[i]!;
    if (before < 0 && after >= 0) crossings.push(i - 1 + -before / (after - before));
  }
  const periods = crossings.length - 1;
  if (periods < 1) throw new Error(`too few zero crossings (${crossings.length}) to estimate a frequency`);
  return (periods * sampleRate) / (crossings[periods]! - crossings[0]!);
}

/** Splits `samples` into frames whose sizes cycle through `sizes`. */
export function frames(samples: Int16Array, sizes: number[]): Int16Array[] {
  const out: Int16Array[] = [];
  for (let offset = 0, k = 0; offset < samples.length; k++) {
    const size = sizes[k % sizes.length];
    if (!size) throw new Error("frame sizes must be positive");
    out.push(samples.subarray(offset, offset + size));
    offset += size;
  }
  return out;
}
