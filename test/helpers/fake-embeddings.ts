// A local stand-in for an OpenAI-compatible embeddings provider (POST /v1/embeddings, the documented
// request `{model, input, encoding_format}` and answer `{object: "list", data: [{object: "embedding",
// index, embedding}], model, usage}`). Its vectors know a few synonyms, so a question can meet a chunk
// it shares no word with, which full-text search alone cannot do.
import type { ReceivedRequest, Reply } from "./receiver";

export const FAKE_DIMS = 256;
const concepts = [
  ["refund", "refunds", "money", "back", "reimbursed", "reimburse", "returns", "repaid"],
  ["cost", "costs", "price", "prices", "fee", "fees", "charge", "much", "pay"],
  ["open", "opening", "hours", "close", "closing", "when"],
];

function hash(word: string) {
  let h = 2166136261;
  for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

/** A unit vector: one dimension per concept word, another hashed per other word. */
export function fakeEmbedding(text: string, dims = FAKE_DIMS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = concepts.findIndex((group) => group.includes(word));
    v[concept >= 0 ? concept : concepts.length + (hash(word) % (dims - concepts.length))]! += concept >= 0 ? 3 : 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** A receiver's responder to embeddings requests, answering vectors of `dims` dimensions. */
export const embeddingsResponder =
  (dims = FAKE_DIMS) =>
  (req: ReceivedRequest): Reply => {
    const body = JSON.parse(req.body.toString()) as { model: string; input: string | string[] };
    const inputs = typeof body.input === "string" ? [body.input] : body.input;
    return {
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        object: "list",
        data: inputs.map((text, index) => ({ object: "embedding", index, embedding: fakeEmbedding(text, dims) })),
        model: body.model,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      }),
    };
  };

/** The receiver's answer to one embeddings request. */
export const answerEmbeddings = embeddingsResponder();
