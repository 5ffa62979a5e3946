package sqlite

import "testing"

func TestRewritePlaceholders(t *testing.T) {
	cases := map[string]string{
		"SELECT 1":                         "SELECT 1",
		"WHERE id = $1 AND x IN ($2, $10)": "WHERE id = ?1 AND x IN (?2, ?10)",
		"WHERE a = $2 OR b = $1 OR c = $2": "WHERE a = ?2 OR b = ?1 OR c = ?2",
		"SELECT '$' || x":                  "SELECT '$' || x",
	}
	for in, want := range cases {
		if got := rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDSNPragmas(t *testing.T) {
	got := dsn("/var/lib/gradient server/gradient.db", "immediate", true)
	want := "file:/var/lib/gradient%20server/gradient.db?_busy_timeout=10000&_foreign_keys=1&_journal_mode=WAL&_query_only=1&_synchronous=NORMAL&_txlock=immediate"
	if got != want {
		t.Errorf("dsn =\n%s\nwant\n%s", got, want)
	}
}
