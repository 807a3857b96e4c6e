import { expect, test } from "bun:test";
import { pathOf } from "../../src/lib/url-path";

test("pathOf gives what URL.pathname gives for the URLs a server sees", () => {
  for (const url of [
    "http://127.0.0.1:3000/api/v1/vendors?page=2",
    "http://localhost/",
    "http://localhost",
    "https://example.com:8443/a/b/c?x=/y",
    "http://[::1]:3000/api/v1/token",
    "http://h/api%2Fv1/x?",
  ])
    expect(pathOf(url)).toBe(new URL(url).pathname);
});
