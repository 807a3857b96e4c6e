// Tiny helpers shared by the resource services.
import { conflict, notFound } from "../errors";

/** The single row of a by-id query, or a 404 naming the resource. */
export async function single<T>(query: PromiseLike<T[]>, what: string): Promise<T> {
  const [row] = await query;
  if (!row) throw notFound(what);
  return row;
}

const pgCode = (error: unknown) => (error as { code?: string })?.code;

/** Turns database constraint violations into 409s with a message the client can act on. */
export async function orConflict<T>(work: PromiseLike<T>, messages: { unique?: string; reference?: string }): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (pgCode(error) === "23505" && messages.unique) throw conflict(messages.unique);
    if (pgCode(error) === "23503" && messages.reference) throw conflict(messages.reference);
    throw error;
  }
}
