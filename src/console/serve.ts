// Serves the console at /console from this API process: the browser code in web/ is bundled by
// Bun.build once, on the first request, and kept in memory. Public config: the bridge's URL for Talk,
// and the test criteria's JSON Schemas, from which the Tests page builds each criterion's fields.
import { Elysia } from "elysia";
import { join } from "node:path";
import type { Config } from "../config";
import { criterionSchemas } from "../models/testing";

const web = join(import.meta.dir, "web");
type Asset = { body: Blob | string; type: string };

async function build(): Promise<Map<string, Asset>> {
  const result = await Bun.build({
    entrypoints: [join(web, "app.ts"), join(web, "talk-worklet.ts")],
    target: "browser",
    minify: true,
    naming: "[name].[ext]",
  });
  if (!result.success) throw new AggregateError(result.logs, "console build failed");
  const assets = new Map<string, Asset>();
  for (const output of result.outputs)
    assets.set(output.path.replace(/^.*\//, ""), { body: output, type: "text/javascript; charset=utf-8" });
  assets.set("console.css", { body: await Bun.file(join(web, "console.css")).text(), type: "text/css; charset=utf-8" });
  assets.set("index.html", { body: await Bun.file(join(web, "index.html")).text(), type: "text/html; charset=utf-8" });
  return assets;
}

/** The bridge's websocket base URL as the browser reaches it: CONSOLE_BRIDGE_URL, else this host at BRIDGE_PORT. */
export function bridgeUrlFor(config: Config, request: Request): string {
  if (config.consoleBridgeUrl) return config.consoleBridgeUrl.replace(/\/$/, "");
  const url = new URL(request.url);
  const host = request.headers.get("host")?.replace(/:\d+$/, "") ?? url.hostname;
  return `${url.protocol === "https:" ? "wss" : "ws"}://${host}:${config.bridge.port}`;
}

export function consoleRoutes(config: Config) {
  let assets: Promise<Map<string, Asset>> | null = null;
  const serve = async (name: string) => {
    assets ??= build();
    const asset = (await assets).get(name);
    if (!asset) return new Response("not found", { status: 404 });
    return new Response(asset.body, { headers: { "content-type": asset.type, "cache-control": "no-cache" } });
  };
  const hide = { detail: { hide: true } };
  return new Elysia({ prefix: "/console" })
    .get("", () => serve("index.html"), hide)
    .get("/", () => serve("index.html"), hide)
    .get("/config.json", ({ request }) => Response.json({ bridgeUrl: bridgeUrlFor(config, request) }), hide)
    .get("/criteria.json", () => Response.json(criterionSchemas), hide)
    .get("/:asset", ({ params }) => serve(params.asset), hide);
}
