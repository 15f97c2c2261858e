import java.sql.*;

/** DatabaseMetaData.getColumns (what Metabase, DBeaver and Tableau call) on a fresh table:
 *  pgJDBC numbers the columns with row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum)
 *  in a subquery over pg_catalog. Prints the fields a client reads, one line per column. */
public class GetColumns {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], "")) {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS jdbc_cols");
                s.execute("CREATE TABLE jdbc_cols (id int, name text, price numeric(10,2), ok boolean, at timestamp, f float8)");
            }
            try (ResultSet rs = c.getMetaData().getColumns(null, "public", "jdbc_cols", "%")) {
                while (rs.next()) {
                    System.out.println(rs.getString("TABLE_NAME") + " " + rs.getString("COLUMN_NAME") + " "
                        + rs.getInt("ORDINAL_POSITION") + " " + rs.getInt("DATA_TYPE") + " " + rs.getString("TYPE_NAME")
                        + " " + rs.getInt("COLUMN_SIZE") + " " + rs.getInt("DECIMAL_DIGITS") + " " + rs.getInt("NULLABLE")
                        + " " + rs.getString("IS_NULLABLE") + " " + rs.getString("IS_AUTOINCREMENT"));
                }
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE jdbc_cols");
            }
        }
    }
}
