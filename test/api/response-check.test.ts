// An answer off its own schema (API_CHECK_RESPONSES=true, as in this suite) is the service's bug: a 500
// in the envelope, never a 400 that blames the client; a request off its schema stays a 400.
import { expect, test } from "bun:test";
import { t, ValidationError } from "elysia";
import { toErrorResponse } from "../../src/api/errors";

const schema = t.Object({ name: t.String() });

test("a response that fails its schema is a 500; a request that fails its schema is a 400 naming the field", () => {
  const [responseStatus, responseBody] = toErrorResponse(
    "VALIDATION",
    new ValidationError("response", schema, {}),
    "t1",
  );
  expect(responseStatus).toBe(500);
  expect(responseBody).toMatchObject({ success: false, message: "internal error", traceId: "t1" });
  const [bodyStatus, body] = toErrorResponse("VALIDATION", new ValidationError("body", schema, {}), "t2");
  expect(bodyStatus).toBe(400);
  expect(JSON.stringify(body)).toContain("name");
});
