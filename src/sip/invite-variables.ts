// An INVITE's `X-` headers as the call's variables: the name lowercased with dashes as underscores
// (X-Customer-Id is x_customer_id); a header given twice keeps its first value.
export function inviteVariables(request: { headers: Record<string, { raw: string }[]> }): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const [name, values] of Object.entries(request.headers)) {
    if (!/^x-/i.test(name) || name.length < 3) continue;
    const key = name.toLowerCase().replaceAll("-", "_");
    const value = values[0]?.raw.trim();
    if (value !== undefined && !Object.hasOwn(variables, key)) variables[key] = value;
  }
  return variables;
}
