// Limits on free-form `parameters` (extensions, hooks, strategies): stored as given and handed on, so
// their size and nesting are bounded here. The body reader (src/api/json-body.ts) bounds the whole body first.
import type { FieldError } from "../errors";

export const MAX_PARAMETERS_BYTES = 64 * 1024;
export const MAX_PARAMETERS_DEPTH = 16;

export function freeFormErrors(value: unknown, field: string): FieldError[] {
  const depth = nestingDepth(value);
  if (depth > MAX_PARAMETERS_DEPTH) return [{ field, message: `nested deeper than ${MAX_PARAMETERS_DEPTH} levels` }];
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
  if (bytes > MAX_PARAMETERS_BYTES) return [{ field, message: `larger than ${MAX_PARAMETERS_BYTES} bytes as JSON` }];
  return [];
}

/** Levels of objects and arrays; iterative, so no input can overflow the stack. */
function nestingDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    max = Math.max(max, depth + 1);
    if (max > MAX_PARAMETERS_DEPTH) return max;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return max;
}
