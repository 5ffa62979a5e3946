package admincli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(headers...)
	return t
}

// row writes one line; tabs and newlines inside a cell become spaces so a cell cannot break
// the layout.
func (t *table) row(cells ...string) {
	clean := make([]string, len(cells))
	for i, c := range cells {
		clean[i] = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, c)
	}
	fmt.Fprintln(t.tw, strings.Join(clean, "\t"))
}

func (t *table) flush() { t.tw.Flush() }

// fields writes "Label: value" lines from alternating labels and values, aligned.
func fields(w io.Writer, kv ...string) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[i], kv[i+1])
	}
	tw.Flush()
}

// stamp prints a time in UTC to the second, "-" when unset.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func visibility(public bool) string {
	if public {
		return "public"
	}
	return "private"
}

func activeOrRevoked(active bool) string {
	if active {
		return "active"
	}
	return "revoked"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orDefault(s string) string {
	if s == "" {
		return "(the repository's default)"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func pinNote(cacheID string) string {
	if cacheID == "" {
		return ""
	}
	return ", pinned to cache " + cacheID
}
