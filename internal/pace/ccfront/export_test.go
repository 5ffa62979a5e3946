package ccfront

import (
	"io"
	"time"
)

// Exported for the external tests, which may import pace-cc-full's packages (this package may
// not: they import it).

type Config = config

var (
	ConfigFrom     = configFrom
	FetchRequest   = fetchRequest
	ReadReply      = readReply
	Dial           = dial
	MaxValue       = maxValue
	ErrRefusedRead = errRefused
)

func (c Config) StateDir() string                         { return c.stateDir }
func (c Config) Roots() (string, string)                  { return c.srcRoot, c.buildRoot }
func (c Config) Group() string                            { return c.group }
func (c Config) Verbose() bool                            { return c.verbose }
func (c Config) Timeouts() (time.Duration, time.Duration) { return c.connectTimeout, c.timeout }
func (c Config) Addr() string                             { return c.addr }

// Fetch asks addr for key with the front's exchange.
func Fetch(addr, key string, recv func(io.Reader, uint32) error) (bool, error) {
	return fetch(config{addr: addr, connectTimeout: time.Second, timeout: 5 * time.Second}, key, recv)
}

// StatsLine is the line the front appends for a hit.
func StatsLine(group, source string, totalMS, lookupMS float64) ([]byte, error) {
	return statsJSON(group, source, time.UnixMilli(1_700_000_000_000), totalMS, lookupMS)
}

// PassthroughLine is the line the front appends for a command it passes through.
func PassthroughLine(group, reason string, totalMS float64) ([]byte, error) {
	return passthroughJSON(group, reason, time.UnixMilli(1_700_000_000_000), totalMS)
}
