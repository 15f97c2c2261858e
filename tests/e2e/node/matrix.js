// node-postgres in the client matrix (tests/e2e/test_client_matrix.py). Prints one JSON object.
// usage: node matrix.js MODE HOST PORT USER DATABASE PREFIX_OR_TABLE IS_POSTGRES
//   scenario: DDL, parameterised inserts of every common type, a materialized view reflecting a
//             later insert, parameterised SELECT, field types and information_schema, COPY out
//             and in (pg-copy-streams), DECLARE/FETCH
//   tls:      connect with SCRAM (PGPASSWORD) over TLS (sslmode=require: not verified)
//   subscribe: DECLARE ... CURSOR FOR SUBSCRIBE + FETCH, then a bare SUBSCRIBE stopped by
//             Client.cancel (a CancelRequest)
const { Client, Query } = require('pg');
const { from: copyFrom, to: copyTo } = require('pg-copy-streams');
const { Readable } = require('stream');
const { pipeline } = require('stream/promises');

const COLUMNS = 'i2 int2, i4 int4, i8 int8, n numeric(12,3), f4 float4, f8 float8, b bool, t text, ' +
  'vc varchar(10), c char(4), by bytea, d date, tm time, ts timestamp, tz timestamptz, iv interval, ' +
  'u uuid, j jsonb, ia int[], ta text[]';
const ROWS = [
  [1, 100000, '1099511627776', '12345.678', 1.5, 2.25, true, 'text é', 'varchar', 'ab', Buffer.from([0, 255]),
    '2024-02-29', '12:34:56.789', '2024-01-02 03:04:05.000006', new Date('2024-01-02T03:04:05Z'),
    '1 day 00:00:03', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', { a: [1, null], b: 'x' }, [1, null, 3], ['a b', null, '']],
  [2, -2147483648, '-9223372036854775808', '-0.001', -0.25, 1e300, false, '', 'v', 'abcd', Buffer.alloc(0),
    '1999-12-31', '00:00:00', '1999-12-31 23:59:59', new Date('2000-06-01T12:00:00Z'), '0', 
    '00000000-0000-0000-0000-000000000000', [], [], []],
];
const LATER = [-32768, 3].concat(Array(18).fill(null));

function norm(rows) {
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => {
    if (Buffer.isBuffer(v)) return [k, v.toString('hex')];
    if (v instanceof Date) return [k, v.toISOString()];
    if (v && typeof v === 'object' && !Array.isArray(v) && v.toPostgres) return [k, v.toPostgres()];
    return [k, v];
  })));
}

(async () => {
  const [mode, host, port, user, database, p, isPg] = process.argv.slice(2);
  const cfg = { host, port: Number(port), user, database };
  if (mode === 'tls') cfg.ssl = { rejectUnauthorized: false };
  const c = new Client(cfg);
  await c.connect();
  const out = {};
  if (mode === 'tls') {
    out.user = (await c.query('SELECT current_user AS u')).rows[0].u;
    out.ssl = Boolean(c.connection.stream.encrypted);
  } else if (mode === 'scenario') {
    await c.query(`CREATE TABLE ${p}all (${COLUMNS})`);
    const ph = COLUMNS.split(', ').map((_, i) => `$${i + 1}`).join(', ');
    for (const row of ROWS) await c.query(`INSERT INTO ${p}all VALUES (${ph})`, row);
    await c.query(`CREATE MATERIALIZED VIEW ${p}mv AS SELECT count(*) AS n, count(t) AS nt, sum(i8) AS s, max(i4) AS m FROM ${p}all`);
    await c.query(`INSERT INTO ${p}all VALUES (${ph})`, LATER);
    if (isPg === '1') await c.query(`REFRESH MATERIALIZED VIEW ${p}mv`);
    out.mv = (await c.query(`SELECT * FROM ${p}mv`)).rows;
    const sel = await c.query(`SELECT * FROM ${p}all WHERE i4 >= $1 AND (u = $2 OR d = $3 OR t IS NULL) ORDER BY i4`,
      [-2147483648, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1999-12-31']);
    out.select = norm(sel.rows);
    out.fields = sel.fields.map((f) => [f.name, f.dataTypeID, f.dataTypeSize, f.dataTypeModifier, f.format]);
    out.columns = (await c.query('select column_name, data_type, udt_name, is_nullable, character_maximum_length, ' +
      'numeric_precision, numeric_scale, ordinal_position from information_schema.columns ' +
      'where table_name = $1 and table_schema = current_schema() order by ordinal_position', [`${p}all`])).rows;
    out.tables = (await c.query('select table_name, table_type from information_schema.tables ' +
      'where table_name like $1 order by table_name', [`${p}%`])).rows;
    const chunks = [];
    for await (const chunk of c.query(copyTo(`COPY (SELECT * FROM ${p}all ORDER BY i4) TO STDOUT`))) chunks.push(chunk);
    out.copy_out = Buffer.concat(chunks).toString();
    await c.query(`CREATE TABLE ${p}cin (${COLUMNS})`);
    const copyIn = c.query(copyFrom(`COPY ${p}cin FROM STDIN`));
    await pipeline(Readable.from([out.copy_out]), copyIn);
    out.copy_in_count = copyIn.rowCount;
    out.copy_in = norm((await c.query(`SELECT * FROM ${p}cin ORDER BY i4`)).rows);
    await c.query(`DROP TABLE ${p}cin`);
    await c.query('BEGIN');
    await c.query(`DECLARE mx_c CURSOR FOR SELECT i4, t, ia FROM ${p}all ORDER BY i4`);
    out.cursor = [(await c.query('FETCH 1 FROM mx_c')).rows, (await c.query('FETCH FORWARD 5 FROM mx_c')).rows];
    await c.query('CLOSE mx_c');
    await c.query('COMMIT');
    await c.query(`DROP MATERIALIZED VIEW ${p}mv`);
    await c.query(`DROP TABLE ${p}all`);
  } else if (mode === 'subscribe') {
    const table = p;
    await c.query('BEGIN');
    await c.query(`DECLARE mx_sub CURSOR FOR SUBSCRIBE ${table}`);
    const rows = [];
    const deadline = Date.now() + 60000;
    let inserted = false;
    while (rows.length < 3) {
      if (Date.now() > deadline) throw new Error(`SUBSCRIBE did not deliver: ${JSON.stringify(rows)}`);
      const r = await c.query({ text: "FETCH ALL mx_sub WITH (timeout = '1s')", rowMode: 'array' });
      rows.push(...r.rows.map((x) => [x[0], Number(x[1]), x[2], x[3]]));
      if (rows.length >= 2 && !inserted) {
        const w = new Client({ host, port: Number(port), user, database });
        await w.connect();
        await w.query(`INSERT INTO ${table} VALUES (3, 'c')`);
        await w.end();
        inserted = true;
      }
    }
    await c.query('CLOSE mx_sub');
    await c.query('COMMIT');
    out.declare = rows;
    // A bare SUBSCRIBE never ends: stop it with a CancelRequest once its snapshot arrived.
    out.cancelled = await new Promise((resolve) => {
      const q = new Query(`SUBSCRIBE ${table}`);
      let seen = 0;
      q.on('row', () => {
        seen += 1;
        if (seen === 3) new Client({ host, port: Number(port), user, database }).cancel(c, q);
      });
      q.on('error', (e) => resolve(e.code));
      q.on('end', () => resolve('ended'));
      c.query(q);
    });
    out.after = (await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
  }
  console.log(JSON.stringify(out));
  await c.end();
})().catch((e) => { console.error('ERR', e.code, e.message); process.exit(1); });
