// Package flagval parses the values pace's daemons take on their command lines: byte sizes and
// durations written the way operators type them. A bare number is refused where a unit is
// required, because "--drain-timeout=30" could mean seconds or minutes and a wrong guess is silent.
package flagval

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax reports a value that is not in the accepted grammar.
var ErrSyntax = errors.New("flagval: invalid value")

var sizeUnits = []struct {
	suffix string
	factor uint64
}{
	// Longest spellings first so "kib" is not read as "k" followed by junk.
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1}, {"", 1},
}

// ParseSize reads a byte size: a whole number with an optional binary unit (B, k/KiB, m/MiB,
// g/GiB, t/TiB; case-insensitive), or, when of is non-zero, N% of it.
func ParseSize(s string, of uint64) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if strings.HasSuffix(t, "%") {
		if of == 0 {
			return 0, fmt.Errorf("%w: %q: a percentage is not accepted here", ErrSyntax, s)
		}
		p, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("%w: %q: want a percentage between 0%% and 100%%", ErrSyntax, s)
		}
		return uint64(float64(of) * p / 100), nil
	}
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(t, u.suffix)
		if !ok || num == "" || strings.TrimLeft(num, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil || n > math.MaxUint64/u.factor {
			return 0, fmt.Errorf("%w: %q: out of range", ErrSyntax, s)
		}
		return n * u.factor, nil
	}
	return 0, fmt.Errorf("%w: %q: want a size such as 512MiB, 20g or 1073741824", ErrSyntax, s)
}

var durationUnits = []struct {
	suffix string
	unit   time.Duration
}{
	{"ms", time.Millisecond}, {"min", time.Minute}, {"s", time.Second},
	{"h", time.Hour}, {"d", 24 * time.Hour},
}

// ParseDuration reads a whole number followed by one of ms, s, min, h, d. A bare number is
// refused: the unit is not guessable.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	for _, u := range durationUnits {
		num, ok := strings.CutSuffix(t, u.suffix)
		if !ok || num == "" || strings.TrimLeft(num, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/int64(u.unit) {
			return 0, fmt.Errorf("%w: %q: out of range", ErrSyntax, s)
		}
		return time.Duration(n) * u.unit, nil
	}
	return 0, fmt.Errorf("%w: %q: want a whole number with a unit (ms, s, min, h, d), such as 30s", ErrSyntax, s)
}

// Size is a flag.Value holding a byte size. Of, when set, is what a percentage refers to.
type Size struct {
	Bytes uint64
	Of    uint64
}

var _ flag.Value = (*Size)(nil)

func (z *Size) String() string { return strconv.FormatUint(z.Bytes, 10) }

// Set parses a size for the flag package.
func (z *Size) Set(s string) error {
	n, err := ParseSize(s, z.Of)
	if err != nil {
		return err
	}
	z.Bytes = n
	return nil
}

// Duration is a flag.Value holding a duration with a mandatory unit.
type Duration struct{ D time.Duration }

var _ flag.Value = (*Duration)(nil)

func (d *Duration) String() string { return d.D.String() }

// Set parses a duration for the flag package.
func (d *Duration) Set(s string) error {
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	d.D = v
	return nil
}
