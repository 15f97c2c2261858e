// Logs in through pgjdbc with a password (and whatever TLS settings the URL carries), runs one
// query and prints its first column, or "ERROR <SQLSTATE> <message>" when the connection or the
// query fails. Used by tests/e2e/test_auth_tls.py.
import java.sql.*;

public class AuthCheck {
    public static void main(String[] args) throws Exception {
        Class.forName("org.postgresql.Driver");
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2]);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(args[3])) {
            rs.next();
            System.out.println(rs.getString(1));
        } catch (SQLException e) {
            System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage());
        }
    }
}
