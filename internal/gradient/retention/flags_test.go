package retention

import (
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "512": 512, "1K": 1024, "1KB": 1000, "1kib": 1024, "512M": 512 << 20, "10GiB": 10 << 30,
		"10G": 10 << 30, "200GB": 200e9, "1.5T": 3 << 39, " 3 MiB ": 3 << 20,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1", "1X", "1.2.3G", "99999999999T", "1 G B"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "0d": 0, "0": 0, "36h": 36 * time.Hour, "90m": 90 * time.Minute, "1h30m": 90 * time.Minute,
	} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "1.5d", "-3h", "7days", "1d12h"} {
		if got, err := ParseAge(in); err == nil {
			t.Errorf("ParseAge(%q) = %v, want an error", in, got)
		}
	}
}

// TestParseSizeReadsWhatItIsGiven: a whole number of any unit reads back as that many units,
// and nothing at all makes it panic.
func TestParseSizeReadsWhatItIsGiven(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64Range(0, 1<<20).Draw(t, "n")
		unit := rapid.SampledFrom([]string{"", "B", "K", "KB", "KiB", "M", "MB", "MiB", "G", "GiB"}).Draw(t, "unit")
		got, err := ParseSize(strconv.FormatInt(n, 10) + unit)
		if want := n * sizeUnits[toUpper(unit)]; err != nil || got != want {
			t.Fatalf("%d%s = %d, %v; want %d", n, unit, got, err, want)
		}
		_, _ = ParseSize(rapid.String().Draw(t, "any"))
		_, _ = ParseAge(rapid.String().Draw(t, "anyAge"))
	})
}

func toUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
