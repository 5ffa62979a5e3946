package flagval

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		of   uint64
		want uint64
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "1024", want: 1024},
		{in: "12B", want: 12},
		{in: "4k", want: 4096},
		{in: "4KiB", want: 4096},
		{in: "512MiB", want: 512 << 20},
		{in: "20g", want: 20 << 30},
		{in: "20GB", want: 20 << 30},
		{in: "1TiB", want: 1 << 40},
		{in: " 3m ", want: 3 << 20},
		{in: "25%", of: 1000, want: 250},
		{in: "25%", bad: true},
		{in: "101%", of: 1000, bad: true},
		{in: "", bad: true},
		{in: "m", bad: true},
		{in: "-1", bad: true},
		{in: "1.5g", bad: true},
		{in: "12x", bad: true},
		{in: "99999999999999999999", bad: true},
		{in: "17179869184g", bad: true},
	}
	for _, c := range cases {
		got, err := ParseSize(c.in, c.of)
		if c.bad {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseSize(%q) = %d, %v; want ErrSyntax", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "250ms", want: 250 * time.Millisecond},
		{in: "10min", want: 10 * time.Minute},
		{in: "2h", want: 2 * time.Hour},
		{in: "1d", want: 24 * time.Hour},
		{in: "0s", want: 0},
		{in: "30", bad: true},
		{in: "1m", bad: true},
		{in: "1.5s", bad: true},
		{in: "s", bad: true},
		{in: "-3s", bad: true},
		{in: "9999999999999999d", bad: true},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if c.bad {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseDuration(%q) = %v, %v; want ErrSyntax", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseSizeNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		n, err := ParseSize(s, rapid.Uint64().Draw(t, "of"))
		if err != nil && n != 0 {
			t.Fatalf("error with non-zero result %d", n)
		}
	})
}

func TestSizeFlagValue(t *testing.T) {
	z := Size{Of: 8 << 30}
	if err := z.Set("50%"); err != nil || z.Bytes != 4<<30 {
		t.Fatalf("Set(50%%) = %v, bytes %d", err, z.Bytes)
	}
	if err := z.Set("nope"); err == nil {
		t.Fatal("Set(nope) accepted")
	}
}
