// The baseline for bench/api: the same reads with one postgres.js query each, and nothing else
// (no framework, no auth, no envelope, no validation, no logging).
import postgres from "postgres";

const sql = postgres(process.env.DATABASE_URL!, { max: 10 });
const port = Number(process.env.PORT);

const children = sql`
  coalesce((select json_agg(json_build_object('id', e.id, 'type', e.type, 'name', e.name, 'parameters', e.parameters) order by e.position)
            from extensions e where e.assistant_id = a.id), '[]') as extensions,
  coalesce((select json_agg(json_build_object('id', h.id, 'type', h.type, 'parameters', h.parameters) order by h.position)
            from call_event_hooks h where h.assistant_id = a.id), '[]') as "callEventHooks"`;
const fields = sql`a.id, a.name, a.system_prompt as "systemPrompt", a.system_prompt_greeting as "systemPromptGreeting",
  a.llm_strategy_id as "llmAudioContentGenerationStrategyId", a.telephone_number_id as "telephoneNumberId"`;

Bun.serve({
  port,
  async fetch(req) {
    const url = new URL(req.url);
    // the bench waits for this before loading it, as it does for ours
    if (url.pathname === "/healthz") return Response.json({ status: "ok" });
    const id = url.pathname.split("/").pop()!;
    if (url.pathname.endsWith("/assistants")) {
      const rows =
        await sql`select ${fields}, ${children} from assistants a where a.organization_id = ${url.searchParams.get("org")!} and a.kind = 'assistant' order by a.name, a.id limit 20`;
      return Response.json(rows);
    }
    const [row] = await sql`select ${fields}, ${children} from assistants a where a.id = ${id}`;
    return Response.json(row ?? null, { status: row ? 200 : 404 });
  },
});
