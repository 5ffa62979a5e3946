package sqlite

import (
	"testing"
)

// TestConnectionsAreConfigured: WAL, foreign keys and the busy timeout on every connection,
// and read-only reader connections.
func TestConnectionsAreConfigured(t *testing.T) {
	db, err := openDB(PathIn(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checks := []struct{ pragma, want string }{
		{"journal_mode", "wal"}, {"foreign_keys", "1"}, {"busy_timeout", "10000"}, {"synchronous", "1"},
	}
	for _, c := range checks {
		for name, conn := range map[string]func(string) (string, error){
			"writer": func(q string) (s string, err error) { err = db.writer.QueryRow(q).Scan(&s); return },
			"reader": func(q string) (s string, err error) { err = db.reader.QueryRow(q).Scan(&s); return },
		} {
			got, err := conn("PRAGMA " + c.pragma)
			if err != nil || got != c.want {
				t.Errorf("%s: PRAGMA %s = %q, %v; want %q", name, c.pragma, got, err, c.want)
			}
		}
	}
	if _, err := db.reader.Exec("CREATE TABLE t (x)"); err == nil {
		t.Error("reader connection can write")
	}
}
