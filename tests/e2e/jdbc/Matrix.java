import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.sql.*;
import java.time.*;
import java.util.*;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.copy.CopyOut;
import org.postgresql.util.PGInterval;
import org.postgresql.util.PGobject;

/** pgJDBC in the client matrix (tests/e2e/test_client_matrix.py); prints one JSON object of
 *  string lists. Usage: java Matrix MODE URL USER PASSWORD PREFIX_OR_TABLE IS_POSTGRES
 *  scenario: DDL, parameterised inserts of every common type, a materialized view reflecting a
 *            later insert, parameterised SELECT, DatabaseMetaData (getTables, getColumns,
 *            getSchemas, getPrimaryKeys, getTypeInfo), CopyManager in and out, fetch-size cursor
 *  tls:      connect (the URL says sslmode=require; the server refuses anything but TLS)
 *  subscribe: DECLARE ... CURSOR FOR SUBSCRIBE + FETCH; COPY (SUBSCRIBE ...) TO STDOUT cancelled */
public class Matrix {
    static final String COLUMNS = "i2 int2, i4 int4, i8 int8, n numeric(12,3), f4 float4, f8 float8, b bool, "
            + "t text, vc varchar(10), c char(4), by bytea, d date, tm time, ts timestamp, tz timestamptz, "
            + "iv interval, u uuid, j jsonb, ia int[], ta text[]";
    static final Set<String> TYPES = new HashSet<>(Arrays.asList("int2", "int4", "int8", "numeric", "float4",
            "float8", "bool", "text", "varchar", "bpchar", "bytea", "date", "time", "timestamp", "timestamptz",
            "interval", "uuid", "jsonb", "_int4", "_text"));
    static final Map<String, List<String>> out = new LinkedHashMap<>();

    static void put(String key, String value) { out.computeIfAbsent(key, k -> new ArrayList<>()).add(value); }

    static String row(ResultSet rs) throws SQLException {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
            if (i > 1) b.append('|');
            if (rs.getMetaData().getColumnTypeName(i).equals("bytea")) {  // binary results print as [B@hash
                byte[] bytes = rs.getBytes(i);
                if (bytes == null) { b.append("null"); continue; }
                b.append("\\x");
                for (byte x : bytes) b.append(String.format("%02x", x));
            } else b.append(rs.getString(i));
        }
        return b.toString();
    }

    static void rows(String key, ResultSet rs) throws SQLException {
        out.computeIfAbsent(key, k -> new ArrayList<>());
        while (rs.next()) put(key, row(rs));
        rs.close();
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    static void bind(Connection c, PreparedStatement ps, boolean first) throws SQLException {
        PGobject j = new PGobject();
        j.setType("jsonb");
        PGInterval iv;
        if (first) {
            ps.setShort(1, (short) 1); ps.setInt(2, 100000); ps.setLong(3, 1L << 40);
            ps.setBigDecimal(4, new BigDecimal("12345.678")); ps.setFloat(5, 1.5f); ps.setDouble(6, 2.25);
            ps.setBoolean(7, true); ps.setString(8, "text é"); ps.setString(9, "varchar"); ps.setString(10, "ab");
            ps.setBytes(11, new byte[] {0, (byte) 255}); ps.setObject(12, LocalDate.of(2024, 2, 29));
            ps.setObject(13, LocalTime.of(12, 34, 56, 789_000_000));
            ps.setObject(14, LocalDateTime.of(2024, 1, 2, 3, 4, 5, 6000));
            ps.setObject(15, OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC));
            try { iv = new PGInterval("1 day 00:00:03"); } catch (Exception e) { throw new SQLException(e); }
            ps.setObject(16, iv); ps.setObject(17, UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"));
            j.setValue("{\"a\": [1, null], \"b\": \"x\"}"); ps.setObject(18, j);
            ps.setArray(19, c.createArrayOf("int4", new Integer[] {1, null, 3}));
            ps.setArray(20, c.createArrayOf("text", new String[] {"a b", null, ""}));
        } else {
            ps.setShort(1, (short) 2); ps.setInt(2, Integer.MIN_VALUE); ps.setLong(3, Long.MIN_VALUE);
            ps.setBigDecimal(4, new BigDecimal("-0.001")); ps.setFloat(5, -0.25f); ps.setDouble(6, 1e300);
            ps.setBoolean(7, false); ps.setString(8, ""); ps.setString(9, "v"); ps.setString(10, "abcd");
            ps.setBytes(11, new byte[0]); ps.setObject(12, LocalDate.of(1999, 12, 31));
            ps.setObject(13, LocalTime.of(0, 0)); ps.setObject(14, LocalDateTime.of(1999, 12, 31, 23, 59, 59));
            ps.setObject(15, OffsetDateTime.of(2000, 6, 1, 12, 0, 0, 0, ZoneOffset.UTC));
            try { iv = new PGInterval("0"); } catch (Exception e) { throw new SQLException(e); }
            ps.setObject(16, iv); ps.setObject(17, new UUID(0, 0));
            j.setValue("[]"); ps.setObject(18, j);
            ps.setArray(19, c.createArrayOf("int4", new Integer[] {}));
            ps.setArray(20, c.createArrayOf("text", new String[] {}));
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0], p = args[4];
        boolean isPg = args[5].equals("1");
        try (Connection c = DriverManager.getConnection(args[1], args[2], args[3])) {
            if (mode.equals("tls")) {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT current_user")) {
                    rs.next();
                    System.out.println("{\"user\": " + json(rs.getString(1)) + ", \"ssl\": true}");
                }
                return;
            }
            if (mode.equals("subscribe")) { subscribe(c, args, p); return; }
            if (mode.equals("copycancel")) { copyCancel(c, p); return; }
            Statement s = c.createStatement();
            s.execute("CREATE TABLE " + p + "all (" + COLUMNS + ")");
            s.execute("CREATE VIEW " + p + "v AS SELECT i4, t, j FROM " + p + "all");
            String ph = String.join(", ", Collections.nCopies(20, "?"));
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + p + "all VALUES (" + ph + ")")) {
                bind(c, ps, true); ps.executeUpdate();
                bind(c, ps, false); ps.executeUpdate();
            }
            s.execute("CREATE MATERIALIZED VIEW " + p + "mv AS SELECT count(*) AS n, count(t) AS nt, sum(i8) AS s, "
                    + "max(i4) AS m FROM " + p + "all");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + p + "all VALUES (" + ph + ")")) {
                ps.setShort(1, (short) -32768); ps.setInt(2, 3);
                for (int i = 3; i <= 20; i++) ps.setNull(i, Types.OTHER);
                ps.executeUpdate();
            }
            if (isPg) s.execute("REFRESH MATERIALIZED VIEW " + p + "mv");
            rows("mv", s.executeQuery("SELECT * FROM " + p + "mv"));
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM " + p + "all WHERE i4 >= ? AND (u = ? OR d = ? "
                    + "OR t IS NULL) ORDER BY i4")) {
                for (int round = 0; round < 6; round++) {  // past prepareThreshold: a named statement, binary results
                    ps.setInt(1, Integer.MIN_VALUE); ps.setObject(2, UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"));
                    ps.setObject(3, LocalDate.of(1999, 12, 31));
                    rows("select" + (round == 0 ? "" : "_" + round), ps.executeQuery());
                }
            }
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getSchemas()) {
                out.put("schemas", new ArrayList<>());
                while (rs.next()) {
                    String name = rs.getString("TABLE_SCHEM");
                    if (name.equals("public") || name.equals("pg_catalog") || name.equals("information_schema"))
                        put("schemas", name + "|" + rs.getString("TABLE_CATALOG").equals(c.getCatalog()));
                }
            }
            try (ResultSet rs = md.getTables(null, "public", p + "%", null)) {
                out.put("tables", new ArrayList<>());
                while (rs.next()) put("tables", rs.getString("TABLE_NAME").substring(p.length()) + "|"
                        + rs.getString("TABLE_TYPE") + "|" + rs.getString("TABLE_SCHEM") + "|" + rs.getString("REMARKS"));
            }
            try (ResultSet rs = md.getColumns(null, "public", p + "%", "%")) {
                out.put("columns", new ArrayList<>());
                while (rs.next()) put("columns", rs.getString("TABLE_NAME").substring(p.length()) + "|"
                        + rs.getString("COLUMN_NAME") + "|" + rs.getInt("DATA_TYPE") + "|" + rs.getString("TYPE_NAME")
                        + "|" + rs.getInt("COLUMN_SIZE") + "|" + rs.getInt("DECIMAL_DIGITS") + "|" + rs.getInt("NULLABLE")
                        + "|" + rs.getInt("ORDINAL_POSITION") + "|" + rs.getString("COLUMN_DEF") + "|"
                        + rs.getString("IS_AUTOINCREMENT"));
            }
            try (ResultSet rs = md.getPrimaryKeys(null, "public", p + "all")) {
                int n = 0;
                while (rs.next()) n++;
                put("primary_keys", "" + n);
            }
            try (ResultSet rs = md.getTypeInfo()) {
                out.put("type_info", new ArrayList<>());
                while (rs.next()) {
                    if (!TYPES.contains(rs.getString("TYPE_NAME"))) continue;
                    StringBuilder b = new StringBuilder();
                    for (String col : new String[] {"TYPE_NAME", "DATA_TYPE", "PRECISION", "LITERAL_PREFIX",
                            "LITERAL_SUFFIX", "NULLABLE", "CASE_SENSITIVE", "SEARCHABLE", "UNSIGNED_ATTRIBUTE",
                            "FIXED_PREC_SCALE", "AUTO_INCREMENT", "MINIMUM_SCALE", "MAXIMUM_SCALE", "NUM_PREC_RADIX"})
                        b.append(rs.getString(col)).append('|');
                    put("type_info", b.toString());
                }
                Collections.sort(out.get("type_info"));
            }
            CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
            StringWriter w = new StringWriter();
            long n = copy.copyOut("COPY (SELECT * FROM " + p + "all ORDER BY i4) TO STDOUT", w);
            put("copy_out", n + "\n" + w);
            s.execute("CREATE TABLE " + p + "cin (" + COLUMNS + ")");
            put("copy_in_count", "" + copy.copyIn("COPY " + p + "cin FROM STDIN", new StringReader(w.toString())));
            rows("copy_in", s.executeQuery("SELECT * FROM " + p + "cin ORDER BY i4"));
            c.setAutoCommit(false);  // a fetch size over a transaction: a portal read in steps
            try (Statement cs = c.createStatement()) {
                cs.setFetchSize(1);
                rows("cursor", cs.executeQuery("SELECT i4, t, ia FROM " + p + "all ORDER BY i4"));
            }
            c.commit();
            c.setAutoCommit(true);
            for (String drop : new String[] {"DROP MATERIALIZED VIEW " + p + "mv", "DROP VIEW " + p + "v",
                    "DROP TABLE " + p + "all", "DROP TABLE " + p + "cin"})
                s.execute(drop);
        }
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, List<String>> e : out.entrySet()) {
            if (b.length() > 1) b.append(", ");
            b.append(json(e.getKey())).append(": [");
            for (int i = 0; i < e.getValue().size(); i++) b.append(i > 0 ? ", " : "").append(json(e.getValue().get(i)));
            b.append(']');
        }
        System.out.println(b.append('}'));
    }

    static void subscribe(Connection c, String[] args, String table) throws Exception {
        c.setAutoCommit(false);
        List<String> rows = new ArrayList<>();
        try (Statement s = c.createStatement()) {
            s.execute("DECLARE mx_sub CURSOR FOR SUBSCRIBE " + table);
            long deadline = System.currentTimeMillis() + 60000;
            boolean inserted = false;
            while (rows.size() < 3) {
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("SUBSCRIBE did not deliver: " + rows);
                try (ResultSet rs = s.executeQuery("FETCH ALL mx_sub WITH (timeout = '1s')")) {
                    while (rs.next()) rows.add("[" + json(rs.getString(1)) + ", " + rs.getLong(2) + ", " + rs.getInt(3)
                            + ", " + json(rs.getString(4)) + "]");
                }
                if (rows.size() >= 2 && !inserted) {
                    try (Connection w = DriverManager.getConnection(args[1], args[2], args[3]);
                         Statement ws = w.createStatement()) {
                        ws.execute("INSERT INTO " + table + " VALUES (3, 'c')");
                    }
                    inserted = true;
                }
            }
            s.execute("CLOSE mx_sub");
        }
        c.commit();
        c.setAutoCommit(true);
        System.out.println("{\"declare\": [" + String.join(", ", rows) + "]}");
    }

    /** CopyManager.copyOut of an endless (or very long) COPY, three reads, cancelCopy(), then three
     *  queries: what each answers. pgJDBC does not read the cancelled COPY's end, so (with PostgreSQL
     *  too) the first query reports its 57014 and each later one the previous query's result. */
    static void copyCancel(Connection c, String sql) throws Exception {
        CopyOut copy = c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
        int reads = 0;
        while (reads < 3 && copy.readFromCopy() != null) reads++;
        copy.cancelCopy();
        List<String> after = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT " + (41 + i))) {
                rs.next();
                after.add(json(rs.getString(1)));
            } catch (SQLException e) {
                after.add(json(e.getSQLState()));
            }
        }
        System.out.println("{\"reads\": " + reads + ", \"after\": [" + String.join(", ", after) + "]}");
    }
}
