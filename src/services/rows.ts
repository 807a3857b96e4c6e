// Tiny helpers shared by the resource services.
import { conflict, notFound, pgErrorCode } from "../errors";

/** The single row of a by-id query, or a 404 naming the resource. */
export async function single<T>(query: PromiseLike<T[]>, what: string): Promise<T> {
  const [row] = await query;
  if (!row) throw notFound(what);
  return row;
}

/** Turns database constraint violations into 409s with a message the client can act on. */
export async function orConflict<T>(
  work: PromiseLike<T>,
  messages: { unique?: string | Record<string, string>; reference?: string },
): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const unique = typeof messages.unique === "string" ? messages.unique : messages.unique?.[constraintOf(error)];
    if (pgErrorCode(error) === "23505" && unique) throw conflict(unique);
    if (pgErrorCode(error) === "23503" && messages.reference) throw conflict(messages.reference);
    throw error;
  }
}

const constraintOf = (error: unknown) =>
  String(
    (error as { cause?: { constraint_name?: string } })?.cause?.constraint_name ??
      (error as { constraint_name?: string })?.constraint_name,
  );
