// Makes sure the server knows our custom search attributes; a dev server started by us already does,
// a shared cluster may refuse to add them, and then deliveries carry a memo only.
import type { Connection } from "@temporalio/client";
import type { NativeConnection } from "@temporalio/worker";
import { hookSearchAttributeKeys } from "../../workflows/search-attributes";
import { log } from "../log";

// temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD: every attribute of ours is a Keyword
const INDEXED_VALUE_TYPE_KEYWORD = 2;

export async function ensureSearchAttributes(
  connection: Pick<Connection | NativeConnection, "operatorService">,
  namespace: string,
): Promise<boolean> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = hookSearchAttributeKeys.filter((key) => !customAttributes || !(key.name in customAttributes));
    if (missing.length === 0) return true;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_VALUE_TYPE_KEYWORD])),
    });
    log.info("temporal search attributes registered", { names: missing.map((k) => k.name) });
    return true;
  } catch (err) {
    log.warn("temporal search attributes unavailable, using memo only", { error: (err as Error).message });
    return false;
  }
}
