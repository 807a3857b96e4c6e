// The spec's PUT rules for extensions and callEventHooks: the list replaces the stored one; an element
// with its id updates it, one without id is created, a stored one left out is removed.
import { badRequest } from "../errors";

export type ListPlan<T> = {
  update: { id: string; item: T; position: number }[];
  create: { item: T; position: number }[];
  remove: string[];
};

export function planList<T extends { id?: string | null }>(
  field: string,
  items: T[],
  existingIds: Set<string>,
): ListPlan<T> {
  const plan: ListPlan<T> = { update: [], create: [], remove: [] };
  const kept = new Set<string>();
  items.forEach((item, position) => {
    if (item.id == null) {
      plan.create.push({ item, position });
      return;
    }
    // an id of another assistant (or none at all) would silently move or invent data: refuse it
    if (!existingIds.has(item.id))
      throw badRequest(`${field}[${position}].id`, "does not belong to this assistant or agent");
    if (kept.has(item.id)) throw badRequest(`${field}[${position}].id`, "appears twice in the list");
    kept.add(item.id);
    plan.update.push({ id: item.id, item, position });
  });
  plan.remove = [...existingIds].filter((id) => !kept.has(id));
  return plan;
}
