// Every failure a client can see is an AppError; its code maps to a status in exactly one place.
export const errorStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;
export type FieldError = { field: string; message: string };

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = "AppError";
  }
  get status() {
    return errorStatus[this.code];
  }
}

export const badRequest = (field: string, message: string) =>
  new AppError("BAD_REQUEST", `${field}: ${message}`, [{ field, message }]);
export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);
export const conflict = (message: string) => new AppError("CONFLICT", message);
export const forbidden = (message = "token has no access to this resource") => new AppError("FORBIDDEN", message);
export const unauthorized = (message = "missing or invalid bearer token") => new AppError("UNAUTHORIZED", message);

// Validators report JSON pointers ("/extensions/0/parameters"); clients read "extensions[0].parameters".
export function fieldName(pointer: string): string {
  return (
    pointer
      .split("/")
      .filter(Boolean)
      .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
      .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), "") || "body"
  );
}
