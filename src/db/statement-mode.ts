// DATABASE_PREPARE=false (PgBouncer in transaction mode): a named statement prepared on one server
// connection is unknown on the next, so none is prepared. One setting per process (its config), set when
// its pools are created (client.ts) and read by executePrepared (prepared.ts): a transaction's handle does
// not carry its pool's options.
let prepared = true;

export const usePreparedStatements = (on: boolean) => {
  prepared = on;
};

export const preparedStatements = () => prepared;
