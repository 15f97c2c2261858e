"""PostgreSQL 15 with hand-written statement-level triggers (pg_ivm style): V1 and V2 are summary
tables; AFTER INSERT / DELETE triggers on orders fold each statement's transition table into them
(+ for new rows, - for old rows) and drop groups whose count reaches zero. An update arrives as a
DELETE plus a COPY of the new version inside one transaction, like every other system here.
"""

from __future__ import annotations

from bench.common.workload import V1_SQL, V2_SQL, ChangeBatch
from bench.peers import pgclient
from bench.peers.pg_refresh import PgBase


def _fold(rows: str, sign: str) -> str:
    """SQL that adds (sign '+') or subtracts (sign '-') the rows of a transition table."""
    return f"""
    INSERT INTO v2 AS t (customer_id, count, sum)
      SELECT customer_id, {sign}count(*), {sign}sum(amount) FROM {rows} GROUP BY customer_id
    ON CONFLICT (customer_id) DO UPDATE SET count = t.count + EXCLUDED.count, sum = t.sum + EXCLUDED.sum;
    DELETE FROM v2 WHERE count = 0 AND customer_id IN (SELECT customer_id FROM {rows});
    INSERT INTO v1 AS t (region, count, sum)
      SELECT c.region, {sign}count(*), {sign}sum(o.amount) FROM {rows} o JOIN customers c
        ON o.customer_id = c.id WHERE o.status = 'captured' GROUP BY c.region
    ON CONFLICT (region) DO UPDATE SET count = t.count + EXCLUDED.count, sum = t.sum + EXCLUDED.sum;
    DELETE FROM v1 WHERE count = 0;
    """


TRIGGERS = f"""
CREATE FUNCTION orders_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {_fold('new_rows', '')} RETURN NULL; END $$;
CREATE FUNCTION orders_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {_fold('old_rows', '-')} RETURN NULL; END $$;
CREATE TRIGGER orders_ins AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION orders_inserted();
CREATE TRIGGER orders_del AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION orders_deleted();
"""


class PgTriggers(PgBase):
    name = "pg-triggers"

    async def hydrate(self) -> None:
        await self.conn.execute(
            "CREATE TABLE v1 (region text PRIMARY KEY, count bigint, sum numeric);"
            "CREATE TABLE v2 (customer_id bigint PRIMARY KEY, count bigint, sum numeric);"
            f"INSERT INTO v1 {V1_SQL}; INSERT INTO v2 {V2_SQL};" + TRIGGERS)

    async def apply(self, batch: ChangeBatch, probe_customer: int) -> None:
        await self.write(batch)
        await pgclient.read_current(self.conn, probe_customer)
