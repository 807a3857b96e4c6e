// A new call learns within 2 s whether it is served (design: "When Postgres is away"): the database
// work before it is told `ready` (authorization, the assistant, its agent task) shares one budget,
// counted from its request, after which the call is refused as "try again later".
import { databaseWithin } from "../db/unavailable";

export const callStartBudgetMs = 1_800;

export type StartBudget = { bound<T>(work: Promise<T>, what: string): Promise<T> };

export function startBudget(totalMs = callStartBudgetMs, from = performance.now()): StartBudget {
  return {
    bound: (work, what) => databaseWithin(work, Math.max(1, Math.round(from + totalMs - performance.now())), what),
  };
}
