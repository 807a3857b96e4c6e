// Reads a Prometheus text exposition into samples, and sums the ones a test asks for.
export type Sample = { name: string; labels: Record<string, string>; value: number };

/** GET `url` as Prometheus would, with the METRICS_TOKEN bearer when one is set (benches set none). */
export async function scrape(url: string): Promise<Sample[]> {
  const token = process.env.METRICS_TOKEN;
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  if (!res.headers.get("content-type")?.startsWith("text/plain")) throw new Error(`GET ${url}: not the text format`);
  return parseMetrics(await res.text());
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `labels` (0 when none). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
