package fleet

import (
	"fmt"
	"strconv"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/flagval"
)

// Setting names accepted by --cluster-set (pace-node §3.2).
const (
	SettingLeaseLifetime = "lease-lifetime"
	SettingFleetOpen     = "fleet-open"
)

// Bounds of the lease-lifetime setting: strictly more than 30 s, at most 1 h.
const (
	DefaultLeaseLifetime = 10 * time.Minute
	MinLeaseLifetime     = 30 * time.Second // exclusive
	MaxLeaseLifetime     = time.Hour        // inclusive
)

// settingUpstream is refused by name: the upstream cache is a per-machine
// secret destination and must never be replicated.
const settingUpstream = "upstream"

// MaxSettingValueLen bounds a setting's value text in a command.
const MaxSettingValueLen = 64

// Settings are the replicated settings. The zero value is not valid; start
// from DefaultSettings.
type Settings struct {
	LeaseLifetime time.Duration
	FleetOpen     bool
}

// DefaultSettings are the settings of a newly founded cluster.
func DefaultSettings() Settings {
	return Settings{LeaseLifetime: DefaultLeaseLifetime}
}

// SettingNames lists every settable key in the order status prints them.
func SettingNames() []string {
	return []string{SettingFleetOpen, SettingLeaseLifetime}
}

// Value renders one setting in the canonical text Set accepts.
func (s Settings) Value(name string) (string, bool) {
	switch name {
	case SettingLeaseLifetime:
		return formatDuration(s.LeaseLifetime), true
	case SettingFleetOpen:
		if s.FleetOpen {
			return "1", true
		}
		return "0", true
	}
	return "", false
}

// with returns s with name set to value, or a sentence saying why not.
func (s Settings) with(name, value string) (Settings, error) {
	switch name {
	case SettingLeaseLifetime:
		d, err := flagval.ParseDuration(value)
		if err != nil {
			return s, fmt.Errorf("lease-lifetime %q: want a duration such as 10min", value)
		}
		if d <= MinLeaseLifetime || d > MaxLeaseLifetime {
			return s, fmt.Errorf("lease-lifetime %s is out of range: it must be more than 30s and at most 1h", value)
		}
		s.LeaseLifetime = d
	case SettingFleetOpen:
		switch value {
		case "0":
			s.FleetOpen = false
		case "1":
			s.FleetOpen = true
		default:
			return s, fmt.Errorf("fleet-open %q: want 0 or 1", value)
		}
	case settingUpstream:
		return s, fmt.Errorf("upstream is never a cluster setting: it names a per-machine secret destination; set --upstream on each node")
	default:
		return s, fmt.Errorf("unknown setting %q; the settable keys are %s and %s", name, SettingFleetOpen, SettingLeaseLifetime)
	}
	return s, nil
}

// formatDuration writes d in the largest unit that divides it exactly.
func formatDuration(d time.Duration) string {
	units := []struct {
		unit   time.Duration
		suffix string
	}{{time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}}
	for _, u := range units {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.suffix
		}
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
