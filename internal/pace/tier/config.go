package tier

import (
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Defaults for the upstream (pace-node §13.12) and the this-machine check (pace-node §4).
const (
	DefaultConnectTimeout  = 2 * time.Second
	DefaultUpstreamTimeout = 10 * time.Second
	DefaultDownWindow      = 10 * time.Second
	DefaultAddrRefresh     = 30 * time.Second
	DefaultUpstreamConns   = 4        // idle connections kept, and background store workers
	DefaultOfferQueue      = 256      // stores waiting to be offered upstream
	DefaultOfferQueueBytes = 64 << 20 // bytes those waiting stores may hold
)

// ErrDisabled is New's answer to a configuration with neither a memory budget nor a
// directory: the node then runs no tier at all and its cache verbs answer unknown-opcode.
var ErrDisabled = errors.New("no cache tier: --cache-memory is 0 and no --cache-dir is set")

// Config is everything the node's cache flags set.
type Config struct {
	Dir       string // --cache-dir; "" = no disk half
	MaxDisk   int64  // --cache-disk; 0 = unbounded
	MaxMemory int64  // --cache-memory; 0 = no memory half
	Sync      store.SyncPolicy
	FS        store.FS // the disk half's filesystem; nil = the operating system's (tests inject faults)

	Upstream         string // --upstream host:port; "" = none (an ordinary configuration)
	UpstreamUsername string
	UpstreamPassword string // --requirepass, presented upstream; never logged
	// MaxValue is the largest value accepted from the upstream (the node's session cap);
	// 0 = wire.DefaultSessionCap.
	MaxValue uint32

	ConnectTimeout  time.Duration // per upstream dial; 0 = DefaultConnectTimeout
	UpstreamTimeout time.Duration // per upstream exchange; 0 = DefaultUpstreamTimeout
	DownWindow      time.Duration // 0 = DefaultDownWindow
	UpstreamConns   int           // 0 = DefaultUpstreamConns
	OfferQueue      int           // 0 = DefaultOfferQueue
	OfferQueueBytes int64         // 0 = DefaultOfferQueueBytes

	// HostAddrs lists this host's interface addresses; nil reads them with
	// net.InterfaceAddrs. Loopback addresses are always this machine and need not be listed.
	HostAddrs   func() ([]netip.Addr, error)
	AddrRefresh time.Duration // 0 = DefaultAddrRefresh
	// ThisMachine, when set, is the node's shared address set (HostAddrs and AddrRefresh are
	// then unused): admission asks the same one.
	ThisMachine *thismachine.Set

	Now    func() time.Time // the injected clock; nil = time.Now
	Logger *slog.Logger     // nil discards
}

// Enabled reports whether the configuration asks for a tier at all (pace-node §4:
// --cache-memory=0 and no --cache-dir is no tier).
func (c Config) Enabled() bool { return c.MaxMemory > 0 || c.Dir != "" }

func (c Config) validate() error {
	if !c.Enabled() {
		return ErrDisabled
	}
	if c.MaxMemory < 0 || c.MaxDisk < 0 {
		return fmt.Errorf("negative cache budget (memory %d, disk %d)", c.MaxMemory, c.MaxDisk)
	}
	if c.Upstream != "" {
		if _, _, err := net.SplitHostPort(c.Upstream); err != nil {
			return fmt.Errorf("--upstream %q: want host:port: %w", c.Upstream, err)
		}
	}
	return nil
}

// withDefaults fills every zero field that has a default.
func (c Config) withDefaults() Config {
	orDuration := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	orDuration(&c.ConnectTimeout, DefaultConnectTimeout)
	orDuration(&c.UpstreamTimeout, DefaultUpstreamTimeout)
	orDuration(&c.DownWindow, DefaultDownWindow)
	orDuration(&c.AddrRefresh, DefaultAddrRefresh)
	if c.UpstreamConns <= 0 {
		c.UpstreamConns = DefaultUpstreamConns
	}
	if c.OfferQueue <= 0 {
		c.OfferQueue = DefaultOfferQueue
	}
	if c.OfferQueueBytes <= 0 {
		c.OfferQueueBytes = DefaultOfferQueueBytes
	}
	if c.MaxValue == 0 {
		c.MaxValue = wire.DefaultSessionCap
	}
	if c.HostAddrs == nil {
		c.HostAddrs = thismachine.InterfaceAddrs
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// local is the address set the tier asks: the shared one, or its own.
func (c Config) local() *thismachine.Set {
	if c.ThisMachine != nil {
		return c.ThisMachine
	}
	return thismachine.New(c.HostAddrs, c.Now, c.AddrRefresh, c.Logger)
}
