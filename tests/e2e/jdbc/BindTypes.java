// Binds a parameter of each type through pgjdbc (server-side prepared statements, so the
// parameter OIDs and binary formats go over the wire), selects it back with an expression,
// and prints one line per case: the same program runs against PostgreSQL and Slipstream and
// the outputs are compared by tests/e2e/test_jdbc_params.py.
import java.math.BigDecimal;
import java.sql.*;
import java.time.*;
import java.util.UUID;
import org.postgresql.util.PGobject;

public class BindTypes {
    interface Binder { void bind(PreparedStatement ps) throws SQLException; }

    static void run(Connection c, String label, String sql, Binder b) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            b.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                StringBuilder out = new StringBuilder(label).append(":");
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    for (int i = 1; i <= n; i++) out.append(" ").append(rs.getString(i));
                }
                System.out.println(out);
            }
        } catch (SQLException e) {
            System.out.println(label + ": ERROR " + e.getSQLState());
        }
    }

    public static void main(String[] args) throws Exception {
        Class.forName("org.postgresql.Driver");
        try (Connection c = DriverManager.getConnection(args[0], args[1], "")) {
            // Prepare on the server from the first execution, so every call binds real OIDs.
            c.unwrap(org.postgresql.PGConnection.class).setPrepareThreshold(1);
            run(c, "int", "SELECT ? + 1", ps -> ps.setInt(1, 41));
            run(c, "bigint", "SELECT ? * 2", ps -> ps.setLong(1, 1L << 40));
            run(c, "smallint", "SELECT ?", ps -> ps.setShort(1, (short) -7));
            run(c, "float8", "SELECT ? / 4", ps -> ps.setDouble(1, 1.5));
            run(c, "float4", "SELECT ?", ps -> ps.setFloat(1, 0.25f));
            run(c, "numeric", "SELECT ? + 0.5", ps -> ps.setBigDecimal(1, new BigDecimal("12.345")));
            run(c, "bool", "SELECT NOT ?", ps -> ps.setBoolean(1, true));
            run(c, "text", "SELECT upper(?) || 'é'", ps -> ps.setString(1, "hello"));
            run(c, "null", "SELECT ?::int IS NULL", ps -> ps.setNull(1, Types.INTEGER));
            run(c, "date", "SELECT ? + 1", ps -> ps.setObject(1, LocalDate.of(2024, 2, 28)));
            run(c, "timestamp", "SELECT ? + interval '1 day'", ps -> ps.setObject(1, LocalDateTime.of(2024, 1, 31, 10, 0, 5)));
            run(c, "timestamptz", "SELECT extract(epoch FROM ?::timestamptz)::float8",
                ps -> ps.setObject(1, OffsetDateTime.of(2024, 1, 1, 12, 0, 0, 0, ZoneOffset.ofHours(2))));
            run(c, "interval", "SELECT ?::interval * 2", ps -> ps.setString(1, "1 day 02:00:00"));
            // (a PGInterval object makes the driver look its type up in pg_catalog.pg_type first)
            run(c, "pginterval", "SELECT ? + interval '1 hour'",
                ps -> ps.setObject(1, new org.postgresql.util.PGInterval(0, 1, 2, 3, 4, 5.5)));
            run(c, "time", "SELECT ? + interval '1 hour'", ps -> ps.setObject(1, LocalTime.of(10, 0, 5)));
            run(c, "timetz", "SELECT ?::timetz", ps -> ps.setObject(1, OffsetTime.of(12, 0, 0, 0, ZoneOffset.ofHours(2))));
            run(c, "char", "SELECT ?::char(4) || '|'", ps -> ps.setString(1, "ab"));
            run(c, "bytea", "SELECT encode(?, 'hex')", ps -> ps.setBytes(1, new byte[] {0, (byte) 255, 92}));
            run(c, "uuid", "SELECT ?::uuid", ps -> ps.setObject(1, UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")));
            run(c, "jsonb", "SELECT ?::jsonb -> 'a'", ps -> {
                PGobject o = new PGobject(); o.setType("jsonb"); o.setValue("{\"b\": 1, \"a\": [1, 2]}"); ps.setObject(1, o);
            });
            run(c, "int[]", "SELECT cardinality(?), (?)[2]", ps -> {
                Array a = c.createArrayOf("int4", new Integer[] {1, 2, null});
                ps.setArray(1, a); ps.setArray(2, a);
            });
            run(c, "text[]", "SELECT array_to_string(?, '|')", ps -> ps.setArray(1, c.createArrayOf("text", new String[] {"a b", "c"})));
            run(c, "float8[]", "SELECT ?", ps -> ps.setArray(1, c.createArrayOf("float8", new Double[] {1.5, null, -0.0})));
            run(c, "numeric[]", "SELECT ?", ps -> ps.setArray(1, c.createArrayOf("numeric", new BigDecimal[] {new BigDecimal("1.50"), null})));
            run(c, "functions", "SELECT date_trunc('month', ?::timestamp), current_database() IS NOT NULL, length(?)",
                ps -> { ps.setObject(1, LocalDateTime.of(2024, 3, 17, 5, 6)); ps.setString(2, "abc"); });
        }
    }
}
