// Contacts as text/csv (design.md, "Campaigns"): a header row with a `to` column; every other column
// is a variable of that name. csv-parse reads RFC 4180 (quoted fields, commas and newlines inside
// quotes, a BOM), which a split on commas gets wrong.
import { CsvError, parse } from "csv-parse/sync";
import { badRequest } from "../errors";
import { MAX_CONTACTS } from "../models/campaigns";

export type CsvContact = { to: string; variables: Record<string, string> };

export function parseContactsCsv(text: string): CsvContact[] {
  let rows: string[][];
  try {
    rows = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: false });
  } catch (error) {
    const where = error instanceof CsvError && error.lines ? ` (line ${error.lines})` : "";
    throw badRequest("contacts", `not valid CSV${where}: ${(error as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) throw badRequest("contacts", "the CSV is empty: a header row with a `to` column is needed");
  const names = header.map((h) => h.trim());
  const toColumn = names.indexOf("to");
  if (toColumn < 0) throw badRequest("contacts", "the CSV's header has no `to` column");
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw badRequest("contacts", `the CSV's header names \`${dup}\` twice`);
  if (body.length === 0) throw badRequest("contacts", "the CSV has no contact rows");
  if (body.length > MAX_CONTACTS) throw badRequest("contacts", `at most ${MAX_CONTACTS} contacts`);
  return body.map((row) => {
    const variables: Record<string, string> = {};
    names.forEach((name, i) => {
      if (i !== toColumn && name !== "") variables[name] = row[i] ?? "";
    });
    return { to: row[toColumn] ?? "", variables };
  });
}
