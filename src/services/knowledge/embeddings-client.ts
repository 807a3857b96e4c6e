// One request to the operator's OpenAI-compatible embeddings endpoint (EMBEDDINGS_URL, the base URL
// like OPENAI_BASE_URL; EMBEDDINGS_MODEL; EMBEDDINGS_API_KEY). The operator's endpoint and key only:
// no tenant URL is ever called from here.
import type { Config } from "../../config";

export type EmbeddingsConfig = Config["knowledge"];

export class EmbeddingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EmbeddingsError";
  }
}

/** `…/embeddings` under the base URL; a URL that already names the endpoint is kept. */
export const embeddingsEndpoint = (url: string) =>
  /\/embeddings\/?$/.test(url) ? url : `${url.replace(/\/+$/, "")}/embeddings`;

/** One vector per input, in input order; throws EmbeddingsError on any failure (network, status, time-out, shape). */
export async function embed(config: EmbeddingsConfig, input: string[], timeoutMs: number): Promise<number[][]> {
  if (!config.embeddingsUrl) throw new EmbeddingsError("EMBEDDINGS_URL is not set");
  let response: Response;
  try {
    response = await fetch(embeddingsEndpoint(config.embeddingsUrl), {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(config.embeddingsApiKey && { Authorization: `Bearer ${config.embeddingsApiKey}` }),
      },
      body: JSON.stringify({ model: config.embeddingsModel, input, encoding_format: "float" }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new EmbeddingsError(`embeddings unreachable: ${(error as Error).message}`);
  }
  if (!response.ok) throw new EmbeddingsError(`embeddings answered ${response.status}`);
  const answer = (await response.json().catch(() => null)) as {
    data?: { index?: number; embedding?: unknown }[];
  } | null;
  const vectors: number[][] = new Array(input.length);
  for (const item of answer?.data ?? []) {
    const { index, embedding } = item;
    if (typeof index === "number" && Array.isArray(embedding) && embedding.every(Number.isFinite))
      vectors[index] = embedding as number[];
  }
  const dims = vectors[0]?.length ?? 0;
  if (dims === 0 || vectors.length !== input.length || vectors.some((v) => !v || v.length !== dims))
    throw new EmbeddingsError("embeddings answered without one vector of one size per input");
  return vectors;
}
