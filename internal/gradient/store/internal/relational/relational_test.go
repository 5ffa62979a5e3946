package relational

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAppendWindow(t *testing.T) {
	cases := []struct {
		out, data  string
		at, offset int64
		max        int
		want       string
	}{
		{"", "hello", 0, 0, 10, "hello"},
		{"", "hello", 0, 2, 10, "llo"},
		{"", "hello", 0, 5, 10, ""},
		{"", "hello", 0, 9, 10, ""},
		{"ab", "hello", 5, 3, 4, "abhe"},
		{"abcd", "hello", 5, 3, 4, "abcd"},
	}
	for _, c := range cases {
		if got := string(appendWindow([]byte(c.out), []byte(c.data), c.at, c.offset, c.max)); got != c.want {
			t.Errorf("appendWindow(%q, %q, at %d, offset %d, max %d) = %q, want %q", c.out, c.data, c.at, c.offset, c.max, got, c.want)
		}
	}
}

func TestLoadMigrations(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_more.sql": {Data: []byte("B")},
		"m/0001_init.sql": {Data: []byte("A")},
		"m/README":        {Data: []byte("ignored")},
	}
	ms, err := LoadMigrations(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{1, "0001_init.sql", "A"}, {2, "0002_more.sql", "B"}}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("migrations (-want +got):\n%s", diff)
	}
	for name, bad := range map[string]fstest.MapFS{
		"unnumbered": {"m/init.sql": {}},
		"zero":       {"m/0000_x.sql": {}},
		"duplicate":  {"m/0001_a.sql": {}, "m/001_b.sql": {}},
	} {
		if _, err := LoadMigrations(bad, "m"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTimestampScan(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, src := range []any{at, at.UnixMicro(), at.In(time.FixedZone("x", 3600))} {
		var ts Timestamp
		if err := ts.Scan(src); err != nil || !ts.Equal(at) || ts.Location() != time.UTC {
			t.Errorf("Scan(%v) = %v, %v", src, ts.Time, err)
		}
	}
	var ts Timestamp
	if err := ts.Scan(nil); err != nil || !ts.IsZero() {
		t.Errorf("Scan(nil) = %v, %v", ts.Time, err)
	}
	if err := ts.Scan("2030"); err == nil {
		t.Error("Scan accepted a string")
	}
}

func TestPlaceholdersAndChunks(t *testing.T) {
	if got := placeholders(3, 3); got != "$3, $4, $5" {
		t.Errorf("placeholders = %q", got)
	}
	ids := strings.Split("abcdefg", "")
	if got := chunks(ids, 3); !cmp.Equal(got, [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g"}}) {
		t.Errorf("chunks = %v", got)
	}
	if got := chunks(nil, 3); len(got) != 0 {
		t.Errorf("chunks(nil) = %v", got)
	}
}

func TestListEncoding(t *testing.T) {
	if encodeList(nil) != "[]" {
		t.Error("nil list encodes as", encodeList(nil))
	}
	got, err := decodeList(encodeList([]string{"kvm", "big-parallel"}))
	if err != nil || !cmp.Equal(got, []string{"kvm", "big-parallel"}) {
		t.Errorf("round trip = %v, %v", got, err)
	}
	if _, err := decodeList("{"); err == nil {
		t.Error("decodeList accepted bad JSON")
	}
}
