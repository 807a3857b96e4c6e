// createDb's answerPath option: the statements a caller waits on (a SIP call's routing and reservation)
// have connections of their own, so a pool held by the calls' transactions does not delay them.
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { answerPathOf, createDb } from "../../src/db/client";

const handle = createDb(process.env.DATABASE_URL!, {
  max: 1,
  answerPath: 1,
  readModel: { enabled: false, leaseMs: 100 },
});
afterAll(() => handle.close());

test("a statement on the answer path is answered while a transaction holds every pooled connection", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding!: () => void;
  const started = new Promise<void>((resolve) => {
    holding = resolve;
  });
  // a call's transaction, waiting on the bridge between its statements
  const transaction = handle.db.transaction(async (tx) => {
    await tx.execute(sql`select 1`);
    holding();
    await held;
  });
  await started;
  // in the pool this would wait for the transaction, which waits for this: the test would time out
  const [row] = await answerPathOf(handle.db).execute<{ one: number }>(sql`select 1 as one`);
  expect(row?.one).toBe(1);
  release();
  await transaction;
});

test("a handle without an answer path answers it on its pool", async () => {
  const plain = createDb(process.env.DATABASE_URL!, { max: 1, readModel: { enabled: false, leaseMs: 100 } });
  try {
    expect(answerPathOf(plain.db)).toBe(plain.db);
  } finally {
    await plain.close();
  }
});
