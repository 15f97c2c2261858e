import java.sql.*;

/** pgjdbc's DatabaseMetaData (what DBeaver, Metabase, Tableau and DataGrip sit on) and result-set
 *  metadata over a table, a view and a materialized view; prints one line per fact so the output
 *  can be compared with PostgreSQL's. Usage: java Metadata URL USER PREFIX */
public class Metadata {
    public static void main(String[] args) throws Exception {
        String prefix = args[2];
        try (Connection c = DriverManager.getConnection(args[0], args[1], "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + prefix + "t (id int NOT NULL, name varchar(20), amount numeric(10,2), at timestamp)");
                s.execute("CREATE VIEW " + prefix + "v AS SELECT id, name FROM " + prefix + "t");
                s.execute("CREATE MATERIALIZED VIEW " + prefix + "mv AS SELECT name, count(*) AS n FROM " + prefix + "t GROUP BY name");
                s.execute("INSERT INTO " + prefix + "t VALUES (1, 'a', 2.50, '2024-01-01 00:00:00')");
                s.execute("CREATE INDEX " + prefix + "t_name_at ON " + prefix + "t (name, at)");
            }
            DatabaseMetaData md = c.getMetaData();
            System.out.println("product " + md.getDatabaseProductName() + " major " + md.getDatabaseMajorVersion());
            try (ResultSet rs = md.getSchemas()) {
                while (rs.next()) {
                    if (rs.getString("TABLE_SCHEM").equals("public")) System.out.println("schema public");
                }
            }
            try (ResultSet rs = md.getTables(null, "public", prefix + "%", null)) {
                while (rs.next()) System.out.println("table " + rs.getString("TABLE_NAME").substring(prefix.length())
                        + " " + rs.getString("TABLE_TYPE"));
            }
            try (ResultSet rs = md.getPrimaryKeys(null, "public", prefix + "t")) {
                int n = 0;
                while (rs.next()) n++;
                System.out.println("primary key columns " + n);
            }
            try (ResultSet rs = md.getIndexInfo(null, "public", prefix + "t", false, false)) {
                while (rs.next()) System.out.println("index " + rs.getString("INDEX_NAME").substring(prefix.length())
                        + " unique=" + !rs.getBoolean("NON_UNIQUE") + " position=" + rs.getInt("ORDINAL_POSITION")
                        + " column=" + rs.getString("COLUMN_NAME") + " order=" + rs.getString("ASC_OR_DESC"));
            }
            try (ResultSet rs = md.getTableTypes()) {
                int n = 0;
                while (rs.next()) n++;
                System.out.println("table types " + (n > 0));
            }
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT id, name, amount, at FROM " + prefix + "t")) {
                ResultSetMetaData rmd = rs.getMetaData();
                for (int i = 1; i <= rmd.getColumnCount(); i++) {
                    System.out.println("column " + rmd.getColumnName(i) + " " + rmd.getColumnTypeName(i) + " "
                            + rmd.getColumnType(i) + " nullable=" + rmd.isNullable(i) + " table="
                            + rmd.getTableName(i).replace(prefix, "") + " precision=" + rmd.getPrecision(i)
                            + " scale=" + rmd.getScale(i));
                }
                while (rs.next()) System.out.println("row " + rs.getInt(1) + " " + rs.getString(2) + " " + rs.getBigDecimal(3));
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP MATERIALIZED VIEW " + prefix + "mv");
                s.execute("DROP VIEW " + prefix + "v");
                s.execute("DROP TABLE " + prefix + "t CASCADE");
            }
        }
    }
}
