// node-postgres against a server: connect, version(), DDL, parameterised inserts of several types,
// a materialized view reflecting a later insert, parameterised SELECT, the information_schema
// queries node tools send, and a multi-statement query. Prints one JSON object.
// usage: node scenario.js HOST PORT USER DATABASE PREFIX
const { Client } = require('pg');

(async () => {
  const [host, port, user, database, p] = process.argv.slice(2);
  const c = new Client({ host, port: Number(port), user, database });
  await c.connect();
  const out = {};
  out.version = (await c.query('SELECT version() AS v')).rows[0].v.startsWith('PostgreSQL');
  await c.query(`CREATE TABLE ${p}t (id int, name text, amount numeric(8,2), at timestamptz, tags text[])`);
  const ins = `INSERT INTO ${p}t VALUES ($1, $2, $3, $4, $5)`;
  await c.query(ins, [1, 'a', '10.50', new Date('2024-01-02T03:04:05Z'), ['x', 'y']]);
  await c.query(ins, [2, null, 3, null, []]);
  await c.query(`CREATE MATERIALIZED VIEW ${p}mv AS SELECT count(*) AS n, sum(amount) AS s FROM ${p}t`);
  await c.query(ins, [3, 'c', 1.25, null, null]);
  out.mv = (await c.query(`SELECT n, s FROM ${p}mv`)).rows;
  out.rows = (await c.query(`SELECT * FROM ${p}t WHERE id <= $1 ORDER BY id`, [2])).rows;
  out.tables = (await c.query('select table_name, table_type from information_schema.tables ' +
    'where table_name = $1 and table_schema = current_schema()', [`${p}t`])).rows;
  out.columns = (await c.query('select column_name, data_type, is_nullable, column_default, ordinal_position ' +
    'from information_schema.columns where table_name = $1 and table_schema = current_schema() ' +
    'order by ordinal_position', [`${p}t`])).rows;
  const [a, b] = await c.query('SELECT 1 AS one; SELECT 2 AS two');
  out.multi = [a.rows, b.rows];
  try {
    await c.query('SELECT 1/0');
  } catch (e) {
    out.error = e.code;
  }
  await c.query(`DROP MATERIALIZED VIEW ${p}mv`);
  await c.query(`DROP TABLE ${p}t`);
  console.log(JSON.stringify(out));
  await c.end();
})().catch((e) => { console.error('ERR', e.code, e.message); process.exit(1); });
