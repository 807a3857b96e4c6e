// Forms generated from the API's own OpenAPI document (GET /swagger/json): a request body's JSON Schema
// decides every input, so a field, a range or an extension type the API adds appears in the console
// without code of its own. Each input is labelled with the API's name for it, by path
// (`parameters.serverUrl`), and carries its full path in data-field (`extensions[2].parameters.serverUrl`)
// for a 400's errors to be shown on it. The rules, by schema:
// - an object: its properties, nested in a fieldset; `id` is not shown but sent back as it was read;
// - oneOf objects told apart by a constant property (`type`): a choice of it, the chosen shape's form;
// - a union of constants or an enum: a choice; a number: its range; writeOnly: a password field that,
//   left empty, leaves the stored secret as it is (null removes it where the API allows);
// - an array: removable rows (of checkboxes when its items are constants);
// - a map of strings (headers): name/value rows;
// - a JSON Schema of an object (properties by name, required): a row per field with a required box;
// - a string holding JSON (contentMediaType application/json): its contentSchema's form, raw JSON one
//   click away.
import { ApiError } from "./api";
import { h } from "./dom";

export type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  maxItems?: number;
  format?: string;
  writeOnly?: boolean;
  contentMediaType?: string;
  contentSchema?: Schema;
  examples?: unknown[];
};

/**
 * A part of a form: its element, and how to read its value. `read` also names the part's inputs:
 * data-field is `field`, the label `field` without `base` (the row it is in).
 */
export type Part = { el: HTMLElement; read: (field: string, base?: string) => unknown };

export type Choice = { value: string; label: string };
/** The document's schemas, and the choices for an id field by its name (a strategy for `…StrategyId`). */
export type FormContext = { schemas: Record<string, Schema>; choices: (name: string) => Choice[] | undefined };

type Operation = { requestBody?: { content?: Record<string, { schema?: Schema }> } };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
let document: Promise<Document> | null = null;
/** The API's OpenAPI document, read once per page load. */
export const apiDocument = () => (document ??= fetch("/swagger/json").then((r) => r.json() as Promise<Document>));

/** The JSON body schema of `method` on the organization's `path` (`/assistants`). */
export async function bodySchema(
  method: string,
  path: string,
): Promise<{ schema: Schema; schemas: FormContext["schemas"] }> {
  const doc = await apiDocument();
  const operation = doc.paths[`/api/v1/vendors/{vendorId}/organizations/{organizationId}${path}`]?.[method];
  const schema = operation?.requestBody?.content?.["application/json"]?.schema;
  if (!schema) throw new Error(`the API documents no body for ${method.toUpperCase()} ${path}`);
  return { schema, schemas: doc.components.schemas };
}

export const join = (field: string, key: string | number) =>
  typeof key === "number" ? `${field}[${key}]` : field ? `${field}.${key}` : key;
const relative = (field: string, base = "") => (base && field.startsWith(base) ? field.slice(base.length) : field);

export const mark = <E extends HTMLElement>(el: E, field: string) => {
  el.dataset.field = field;
  return el;
};

/** JSON when it parses (2, true, {"ok":true}), else the text itself. */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
export const asText = (value: unknown) =>
  value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);

function resolve(ctx: FormContext, schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const found = ctx.schemas[schema.$ref.replace("#/components/schemas/", "")];
  if (!found) throw new Error(`the document has no ${schema.$ref}`);
  return resolve(ctx, found);
}

/** A schema without its `null` alternative, and whether it had one. */
function nonNull(ctx: FormContext, schema: Schema): { schema: Schema; nullable: boolean } {
  const own = resolve(ctx, schema);
  const alternatives = (own.anyOf ?? own.oneOf)?.map((s) => resolve(ctx, s));
  const others = alternatives?.filter((s) => s.type !== "null");
  if (others?.length === 1 && others.length < alternatives!.length)
    return { schema: { description: own.description, ...others[0]! }, nullable: true };
  return { schema: own, nullable: false };
}

/** The constants a schema allows (an enum, a union of literals), if that is all it allows. */
function constants(ctx: FormContext, schema: Schema): unknown[] | undefined {
  if (schema.enum) return schema.enum;
  const alternatives = (schema.anyOf ?? schema.oneOf)?.map((s) => resolve(ctx, s));
  if (alternatives?.length && alternatives.every((s) => "const" in s)) return alternatives.map((s) => s.const);
  return undefined;
}

/** What the user sees beside a field: its range and the API's description (defaults are said there). */
function hint(schema: Schema) {
  const range =
    schema.minimum !== undefined || schema.maximum !== undefined
      ? `${schema.minimum ?? "…"}–${schema.maximum ?? "…"}`
      : schema.minItems || schema.maxItems
        ? `${schema.minItems ?? 0}–${schema.maxItems ?? "…"} rows`
        : "";
  const text = [range, schema.default !== undefined && `default ${schema.default}`, schema.description]
    .filter(Boolean)
    .join("; ");
  return text ? h("small", { className: "hint" }, text) : null;
}

/** A labelled input; `value` reads it. */
function leaf(schema: Schema, input: HTMLElement, value: () => unknown, extra?: Node): Part {
  const name = h("span", { className: "field-name" });
  return {
    el: h("label", { className: "field" }, name, " ", input, extra, hint(schema)),
    read(field, base) {
      mark(input, field);
      name.textContent = relative(field, base);
      return value();
    },
  };
}

/** The form part for `schema` holding `value`; a field's inputs are named `key` (scripts find them by it). */
export function part(ctx: FormContext, schema: Schema, value: unknown, required: boolean, key = ""): Part {
  const built = anyPart(ctx, schema, value, required, key);
  if (key && built.el.matches("label.field"))
    for (const input of built.el.querySelectorAll("input:not(.remove-secret), select, textarea"))
      input.setAttribute("name", key);
  return built;
}

function anyPart(ctx: FormContext, schema: Schema, value: unknown, required: boolean, key: string): Part {
  const { schema: s, nullable } = nonNull(ctx, schema);
  // an optional field left empty is left out; a required nullable one is sent as null
  const empty = () => (required && nullable ? null : undefined);
  const values = constants(ctx, s);
  if (values) return choicePart(s, values, value, required, empty);
  const alternatives = (s.oneOf ?? s.anyOf)?.map((a) => resolve(ctx, a));
  if (alternatives?.length && alternatives.every((a) => a.type === "object" && a.properties)) {
    const key = discriminator(ctx, alternatives);
    return key ? unionPart(ctx, alternatives, key, value) : objectPart(ctx, merged(ctx, alternatives), value, required);
  }
  if (s.type === "object") return objectPart(ctx, s, value, required);
  if (s.type === "array") return arrayPart(ctx, s, value, required);
  if (s.type === "integer" || s.type === "number") {
    const input = h("input", {
      type: "number",
      min: s.minimum,
      max: s.maximum,
      step: s.type === "integer" ? 1 : "any",
    });
    input.value = asText(value);
    return leaf(s, input, () => (input.value === "" ? empty() : Number(input.value)));
  }
  if (s.type === "boolean") {
    if (required) {
      const box = h("input", { type: "checkbox", checked: value === true });
      return leaf(s, box, () => box.checked);
    }
    return choicePart(s, [true, false], value, false, empty);
  }
  if (s.type === "string" && s.writeOnly) return secretPart(s, nullable);
  if (s.type === "string" && s.contentMediaType === "application/json" && s.contentSchema)
    return jsonStringPart(ctx, s, value, empty);
  const choices = s.format === "uuid" ? ctx.choices(key) : undefined;
  if (choices) return choicePart(s, choices, value, required, empty, true);
  const input =
    (s.maxLength ?? 0) >= 2000 && !s.pattern
      ? h("textarea", { rows: (s.maxLength ?? 0) >= 10_000 ? 6 : 2 }, asText(value))
      : h("input", { size: 50, value: asText(value) });
  // suggested values (merged shapes): a datalist beside the input
  const suggestions =
    s.examples &&
    h(
      "datalist",
      { id: `suggest-${++suggestionLists}` },
      s.examples.map((v) => h("option", { value: String(v) })),
    );
  if (suggestions) input.setAttribute("list", suggestions.id);
  // a field of no type (an analysis criterion's `equals`) takes any JSON value, or text
  return leaf(
    s,
    input,
    // a required text left empty is sent empty, for the API to name it
    () =>
      input.value === "" ? (required && !nullable ? "" : empty()) : s.type ? input.value : jsonOrText(input.value),
    suggestions || undefined,
  );
}
let suggestionLists = 0;

/** A choice of constants (or of resources, by id); "(not set)" leaves an optional field out. */
function choicePart(
  s: Schema,
  values: unknown[] | Choice[],
  value: unknown,
  required: boolean,
  empty: () => unknown,
  byId = false,
) {
  const options = byId
    ? [...(values as Choice[])]
    : values.map((v) => ({ value: JSON.stringify(v), label: String(v) }));
  const current = value === undefined || value === null ? "" : byId ? String(value) : JSON.stringify(value);
  // a stored value the choices lack (an id past the list's first 100, a value no longer offered) stays chosen
  if (current && !options.some((o) => o.value === current))
    options.push({ value: current, label: `${String(value)} (as stored)` });
  const select = h(
    "select",
    {},
    !required || !current ? h("option", { value: "" }, required ? "(choose)" : "(not set)") : null,
    options.map((o) => h("option", { value: o.value, selected: o.value === current }, o.label)),
  );
  return leaf(s, select, () => (select.value === "" ? empty() : byId ? select.value : JSON.parse(select.value)));
}

/** A write-only secret: never shown; empty keeps the stored one; "remove" sends null where the API takes it. */
function secretPart(s: Schema, nullable: boolean): Part {
  const input = h("input", { type: "password", size: 40, autocomplete: "off", placeholder: "(unchanged)" });
  const remove = nullable ? h("input", { type: "checkbox", className: "remove-secret" }) : null;
  const extra = remove
    ? h("span", { className: "choices" }, h("label", {}, remove, " remove the stored one"))
    : undefined;
  return leaf(s, input, () => (remove?.checked ? null : input.value === "" ? undefined : input.value), extra);
}

function objectPart(ctx: FormContext, s: Schema, value: unknown, required: boolean): Part {
  const given = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const properties = Object.entries(s.properties ?? {});
  if (!properties.length) return mapPart(ctx, s, given, required);
  if (isObjectJsonSchema(ctx, s)) return fieldsPart(ctx, s, given);
  const legend = h("legend");
  const shown: [string, Part][] = [];
  const fixed: Record<string, unknown> = {};
  for (const [key, schema] of properties) {
    const own = resolve(ctx, schema);
    // an id is the API's, not the user's: sent back as read, so the stored item (and its secrets) is kept
    if (key === "id") {
      if (given.id !== undefined) fixed.id = given.id;
    } else if ("const" in own) fixed[key] = own.const;
    else shown.push([key, part(ctx, schema, given[key], s.required?.includes(key) ?? false, key)]);
  }
  const el = h(
    "fieldset",
    { className: "object" },
    legend,
    shown.map(([, p]) => p.el),
  );
  return {
    el,
    read(field, base) {
      mark(el, field);
      legend.textContent = relative(field, base);
      legend.hidden = !legend.textContent;
      const out: Record<string, unknown> = { ...fixed };
      for (const [key, p] of shown) {
        const v = p.read(join(field, key), base);
        if (v !== undefined) out[key] = v;
      }
      // an optional object with nothing set is left out (its defaults apply)
      return required || Object.keys(out).length > Object.keys(fixed).length ? out : undefined;
    },
  };
}

/** A map by name (headers, a tool's arguments): name/value rows; values JSON or text unless they are strings. */
function mapPart(ctx: FormContext, s: Schema, given: Record<string, unknown>, required: boolean): Part {
  const values = [s.additionalProperties, ...Object.values(s.patternProperties ?? {})].find(
    (v): v is Schema => typeof v === "object",
  );
  return pairs(given, { json: !values || resolve(ctx, values).type !== "string", required, schema: s });
}

/** Name/value rows read as an object (left out when empty, unless `required`); each value marked by its name. */
export function pairs(
  value: Record<string, unknown> | undefined,
  options: { json: boolean; required?: boolean; schema?: Schema },
): Part {
  const { json } = options;
  const list = rows<[string, unknown]>(
    Object.entries(value ?? {}),
    ([k, v] = ["", ""]) => {
      const name = h("input", { className: "pair-key", placeholder: "name", value: k });
      const text = h("input", { className: "pair-value", placeholder: json ? "value (JSON or text)" : "value" });
      text.value = json ? asText(v) : String(v);
      return {
        el: h("span", { className: "pair" }, name, " = ", text),
        read(field) {
          const key = name.value.trim();
          mark(text, join(field.replace(/\[\d+\]$/, ""), key));
          return [key, json ? jsonOrText(text.value) : text.value];
        },
      };
    },
    { schema: options.schema, className: "pairs", addLabel: "Add a name and value" },
  );
  return {
    el: list.el,
    read(field, base) {
      const entries = (list.read(field, base) as [string, unknown][]).filter(([k]) => k);
      return entries.length || options.required ? Object.fromEntries(entries) : undefined;
    },
  };
}

function arrayPart(ctx: FormContext, s: Schema, value: unknown, required: boolean): Part {
  const given = Array.isArray(value) ? value : [];
  const items = resolve(ctx, s.items ?? {});
  const values = constants(ctx, items);
  if (values) {
    const chosen = new Set(given.map((v) => JSON.stringify(v)));
    const boxes = values.map((v) =>
      h("input", { type: "checkbox", value: String(v), checked: chosen.has(JSON.stringify(v)) }),
    );
    const el = h(
      "span",
      { className: "choices" },
      boxes.map((b) => h("label", {}, b, " ", b.value)),
    );
    return leaf(s, el, () => values.filter((_, i) => boxes[i]!.checked));
  }
  const list = rows(given, (item) => part(ctx, items, item, true), { schema: s });
  return {
    el: list.el,
    read(field, base) {
      const out = list.read(field, base) as unknown[];
      // a list the stored object has stays a list when emptied (PUT replaces it)
      return out.length || required || Array.isArray(value) ? out : undefined;
    },
  };
}

/**
 * Removable rows of `row`, with an "Add" button (data-add is the list's path); reads as an array.
 * Adding or removing a row names the rows again (their paths' indices move).
 */
export function rows<T>(
  items: T[],
  row: (item?: T) => Part,
  options: { schema?: Schema; className?: string; addLabel?: string } = {},
): Part {
  const { className = "rows", schema: s = {} } = options;
  const list = h("div", { className });
  const name = h("span", { className: "field-name" });
  const parts: Part[] = [];
  let named: [string, string | undefined] | null = null;
  const rename = () => named && read(...named);
  const add = (item?: T) => {
    const p = row(item);
    const remove = h("button", { type: "button", className: "remove" }, "Remove");
    const wrapper = h("div", { className: "row" }, p.el, remove);
    remove.onclick = () => {
      parts.splice(parts.indexOf(p), 1);
      wrapper.remove();
      rename();
    };
    parts.push(p);
    list.append(wrapper);
  };
  for (const item of items) add(item);
  const more = h("button", { type: "button", className: `add ${className}-add` }, options.addLabel ?? "Add");
  more.onclick = () => {
    add();
    rename();
  };
  const el = h("div", { className: "list" }, name, hint(s), list, more);
  function read(field: string, base?: string) {
    named = [field, base];
    mark(el, field);
    more.dataset.add = field;
    name.textContent = relative(field, base);
    return parts.map((p, i) => p.read(join(field, i), base));
  }
  return { el, read };
}

/** A JSON Schema of an object: `properties` a map of field schemas, `required` their names. */
function isObjectJsonSchema(ctx: FormContext, s: Schema) {
  const properties = s.properties?.properties && resolve(ctx, s.properties.properties);
  const required = s.properties?.required && nonNull(ctx, s.properties.required).schema;
  return (
    properties?.type === "object" &&
    !properties.properties &&
    required?.type === "array" &&
    resolve(ctx, required.items ?? {}).type === "string"
  );
}

/** A JSON Schema of an object as rows: name, the field's own form, required; other keywords kept as they were. */
function fieldsPart(ctx: FormContext, s: Schema, given: Record<string, unknown>): Part {
  const map = resolve(ctx, s.properties!.properties!);
  const fieldSchema = [map.additionalProperties, ...Object.values(map.patternProperties ?? {})].find(
    (v): v is Schema => typeof v === "object",
  ) ?? { type: "object" };
  const stored = (given.properties ?? {}) as Record<string, Record<string, unknown>>;
  const requiredNames = new Set((given.required ?? []) as string[]);
  const list = rows(
    Object.keys(stored),
    (name = "") => {
      const key = h("input", { className: "field-key", placeholder: "name", value: name });
      const own = part(ctx, fieldSchema, stored[name], true);
      const needed = h("input", { type: "checkbox", className: "field-required", checked: requiredNames.has(name) });
      return {
        el: h(
          "div",
          { className: "schema-field" },
          h("label", {}, "name ", key),
          own.el,
          h("label", {}, needed, " required"),
        ),
        read(field, base) {
          mark(key, join(field, "name"));
          // keywords the form has no input for (enum, items, …) stay as they were
          const value = { ...(stored[name] ?? {}), ...(own.read(field, base) as object) };
          return [key.value.trim(), value, needed.checked];
        },
      };
    },
    { schema: s.properties!.properties },
  );
  const el = h("div", { className: "schema-fields" }, list.el);
  return {
    el,
    read(field, base) {
      const read = (list.read(join(field, "properties"), base) as [string, object, boolean][]).filter(([k]) => k);
      const { properties: _, required: __, ...rest } = given;
      const required = read.filter(([, , r]) => r).map(([k]) => k);
      return {
        ...rest,
        type: "object",
        properties: Object.fromEntries(read.map(([k, v]) => [k, v])),
        ...(required.length && { required }),
      };
    },
  };
}

/** A string that holds JSON: its content's form, or the raw JSON (one click away, and when it does not fit). */
function jsonStringPart(ctx: FormContext, s: Schema, value: unknown, empty: () => unknown): Part {
  const box = h("div", { className: "json-string" });
  const raw = h("textarea", { rows: 8, className: "raw-json" });
  const toggle = h("button", { type: "button", className: "raw-toggle" });
  const problem = h("span", { className: "error" });
  let form: Part | null = null;
  let named: [string, string | undefined] = ["", undefined];
  const showForm = (text: string) => {
    const parsed = text.trim() === "" ? undefined : jsonOrText(text);
    if (parsed !== undefined && (typeof parsed !== "object" || parsed === null)) return false;
    form = part(ctx, s.contentSchema!, parsed, true);
    box.replaceChildren(form.el);
    form.read(...named);
    toggle.textContent = "Raw JSON";
    return true;
  };
  const showRaw = (text: string) => {
    form = null;
    raw.value = text;
    box.replaceChildren(raw);
    toggle.textContent = "Form";
  };
  toggle.onclick = () => {
    problem.textContent = "";
    if (form) showRaw(JSON.stringify(form.read(...named), null, 2));
    else if (!showForm(raw.value)) problem.textContent = "not a JSON object: the form cannot show it";
  };
  const initial = asText(value);
  if (!showForm(initial)) showRaw(initial);
  const name = h("span", { className: "field-name" });
  const el = h("div", { className: "field json-content" }, name, " ", toggle, problem, hint(s), box);
  return {
    el,
    read(field, base) {
      named = [field, base];
      mark(el, field);
      name.textContent = relative(field, base);
      if (!form) return raw.value.trim() === "" ? empty() : mark(raw, field).value;
      return JSON.stringify(form.read(field, base));
    },
  };
}

/** The property that tells object shapes apart: a constant in each of them (but at most one, "other"). */
function discriminator(ctx: FormContext, shapes: Schema[]): string | undefined {
  const constant = (s: Schema, k: string) =>
    s.properties![k] !== undefined && "const" in resolve(ctx, s.properties![k]!);
  return Object.keys(shapes[0]!.properties!).find(
    (k) => shapes.filter((s) => constant(s, k)).length >= Math.max(1, shapes.length - 1),
  );
}

/**
 * Object shapes with no property to tell them apart (a Realtime voice: a listed voiceId, or any with
 * provider "openai") as one object of all their properties; where they differ, the freer schema, its
 * input suggesting the other's constants.
 */
function merged(ctx: FormContext, shapes: Schema[]): Schema {
  const properties: Record<string, Schema> = {};
  for (const shape of shapes)
    for (const [k, own] of Object.entries(shape.properties!)) {
      const p = resolve(ctx, own);
      const before = properties[k] && resolve(ctx, properties[k]);
      if (!before) properties[k] = p;
      else if (constants(ctx, before) && !constants(ctx, p))
        properties[k] = { ...p, examples: constants(ctx, before), description: before.description ?? p.description };
    }
  const required = shapes.map((s) => s.required ?? []).reduce((a, b) => a.filter((k) => b.includes(k)));
  return { ...shapes[0]!, properties, required };
}

/**
 * oneOf objects told apart by a constant property (an extension's `type`): a choice of that property,
 * then the chosen shape's fields. A shape without the constant (an extension type stored as given)
 * is the choice "other", with the property typed in. Switching keeps the fields both shapes share.
 */
function unionPart(ctx: FormContext, shapes: Schema[], key: string, value: unknown): Part {
  const given = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const constOf = (s: Schema) => {
    const p = resolve(ctx, s.properties![key] ?? {});
    return "const" in p ? String(p.const) : "";
  };
  const select = h(
    "select",
    { className: "union-choice" },
    shapes.map((s) => h("option", { value: constOf(s) }, constOf(s) || "(other)")),
  );
  const known = shapes.some((s) => constOf(s) === given[key]);
  select.value = known ? String(given[key]) : given[key] === undefined ? constOf(shapes[0]!) : "";
  const otherName = h("input", { className: "union-other", value: known ? "" : asText(given[key]) });
  const name = h("span", { className: "field-name" });
  const choice = h("label", { className: "field" }, name, " ", select, " ", otherName);
  const body = h("div", { className: "union-body" });
  let shape = shapes[0]!;
  let form: Part | null = null;
  let named: [string, string | undefined] = ["", undefined];
  const build = (values: Record<string, unknown>) => {
    shape = shapes.find((s) => constOf(s) === select.value) ?? shapes[0]!;
    otherName.hidden = constOf(shape) !== "";
    const { [key]: _, ...others } = shape.properties!;
    form = objectPart(ctx, { ...shape, properties: others }, values, true);
    body.replaceChildren(form.el);
  };
  build(given);
  select.onchange = () => {
    const before = shape;
    const current = (form!.read(...named) ?? {}) as Record<string, unknown>;
    build({});
    // fields of the same schema in both shapes (an extension's name) keep their values
    const kept = Object.fromEntries(
      Object.entries(current).filter(
        ([k]) => JSON.stringify(before.properties![k]) === JSON.stringify(shape.properties![k]),
      ),
    );
    build(kept);
    read(...named);
  };
  const el = h("div", { className: "union" }, choice, body);
  function read(field: string, base?: string): unknown {
    named = [field, base];
    mark(el, field);
    // labels inside a row read from the row: `parameters.serverUrl`, not `extensions[2].parameters.serverUrl`
    const inner = field ? `${field}.` : base;
    // the typed-in value is the field only when "(other)" is chosen
    mark(constOf(shape) ? select : otherName, join(field, key));
    delete (constOf(shape) ? otherName : select).dataset.field;
    name.textContent = key;
    const own = form!.read(field, inner) as Record<string, unknown>;
    return { [key]: constOf(shape) || otherName.value.trim(), ...own };
  }
  return { el, read };
}

/** A 400's errors on the form: each named input outlined with its message (or its nearest named part). */
export function showErrors(form: HTMLElement, error: unknown) {
  for (const el of form.querySelectorAll(".invalid")) el.classList.remove("invalid");
  for (const el of form.querySelectorAll(".field-error")) el.remove();
  if (!(error instanceof ApiError)) return;
  for (const { field, message } of error.errors) {
    let path = field;
    let target = form.querySelector(`[data-field="${CSS.escape(path)}"]`);
    while (!target && path) {
      path = /^(.*?)(\.[^.[\]]+|\[\d+\])$/.exec(path)?.[1] ?? "";
      target = path ? form.querySelector(`[data-field="${CSS.escape(path)}"]`) : null;
    }
    if (!target) continue;
    target.classList.add("invalid");
    target.after(h("span", { className: "field-error error", "data-error-for": field }, `${field}: ${message}`));
  }
}

/**
 * A form's save: clears the last outcome, then shows what `save` returns on `result`, or the API's
 * error there and on the fields it names.
 */
export async function submitForm(form: HTMLElement, result: HTMLElement, save: () => Promise<string | undefined>) {
  result.className = "";
  result.textContent = "";
  showErrors(form, null);
  try {
    result.textContent = (await save()) ?? "";
  } catch (e) {
    result.className = "error";
    result.textContent = (e as Error).message;
    showErrors(form, e);
  }
}
