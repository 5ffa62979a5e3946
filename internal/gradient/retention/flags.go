package retention

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeUnits are the suffixes ParseSize reads: SI and binary multiples, with or without B.
var sizeUnits = map[string]int64{
	"": 1, "B": 1,
	"K": 1 << 10, "KB": 1000, "KIB": 1 << 10,
	"M": 1 << 20, "MB": 1000 * 1000, "MIB": 1 << 20,
	"G": 1 << 30, "GB": 1000 * 1000 * 1000, "GIB": 1 << 30,
	"T": 1 << 40, "TB": 1000 * 1000 * 1000 * 1000, "TIB": 1 << 40,
}

// ParseSize reads a byte size as operators type it: "0", "512M", "10GiB", "1.5T", "200GB"
// (a bare K, M, G or T is binary). Negative, fractional bytes beyond the unit and overflow are
// refused.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (K, M, G, T, KB, MiB, …)", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q: %w", s, errors.Join(err, errors.New("not a non-negative number")))
	}
	b := v * float64(mult)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(b), nil
}

// ParseAge reads a duration that may be given in days: "7d", "36h", "90m", "1d12h" is not
// read (use 36h), "0" turns the age off.
func ParseAge(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(t, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("age %q: want whole days such as 7d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("age %q: want a duration such as 7d, 12h or 30m", s)
	}
	return d, nil
}
