package discovery

import (
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Defaults (pace-node §9.1, pace-node §13.5).
const (
	DefaultBeaconPort   = 6681
	DefaultInterval     = 15 * time.Second
	DefaultReproveAfter = 5 * time.Minute
	DefaultCookieEvery  = 2 * time.Minute
	// MaxNodes bounds the table of nodes heard and proven.
	MaxNodes = 1024
	// MaxFailuresPerCookie is how many proofs with a failing signature one cookie pays for.
	MaxFailuresPerCookie = 2
)

// Roster is the cluster's applied membership: what a same-cluster proof is judged against.
// The fleet state (a lease.Roster) satisfies it. It must answer from the state applied now
// and be safe for concurrent use.
type Roster interface {
	// MemberKey is the identity key recorded for a live voter or learner.
	MemberKey(id string) (ed25519.PublicKey, bool)
	// Revoked reports whether the cluster revoked this key (a forget revokes the key too).
	Revoked(key ed25519.PublicKey) bool
}

// Config is what a node gives discovery. Key, Summary and Roster are required.
type Config struct {
	// Key signs this node's proofs: its identity key.
	Key discoverywire.Signer
	// Summary is this node's fleet summary now; its ClusterID is the cluster proofs are
	// judged for, its NodeID is this node. It is read every beacon round and, for answering
	// datagrams, at most about once a second; it must be safe for concurrent use.
	Summary func() verbs.FleetSummary
	Roster  Roster
	// OnPeer is told of every member of this cluster that proved the key the roster holds
	// for it, each time it proves it. OnForeign is handed every other cluster's summary
	// whose signature verified, for formation to judge. Either may be nil; both are called
	// on the engine's goroutines and must not block for long.
	OnPeer    func(Peer)
	OnForeign func(Proven)
	// Targets are where beacons go: "host:port" or "host" (on the beacon port), possibly
	// broadcast addresses. Empty means the directed broadcast of every eligible interface.
	Targets []string
	// BeaconPort and ReplyPort are bound on the wildcard; 0 lets the kernel choose. A node
	// passes DefaultBeaconPort unless configured otherwise.
	BeaconPort, ReplyPort int
	// Interval between beacon rounds (0: DefaultInterval); ReproveAfter is how long a
	// proof stands before an unchanged beacon is challenged again (0: DefaultReproveAfter);
	// CookieEvery is how often the cookie secret rotates (0: DefaultCookieEvery).
	Interval, ReproveAfter, CookieEvery time.Duration
	// Limits are the anti-abuse budgets; a zero Rate takes its default.
	Limits Limits
	Log    *slog.Logger
	Now    func() time.Time // nil: time.Now
	Rand   io.Reader        // cookie secrets; nil: crypto/rand
	// Interfaces lists this host's interfaces for the default targets; nil: net.Interfaces.
	Interfaces func() ([]Interface, error)
}

// Limits are the anti-abuse budgets of pace-node §9.1: answers per source address and per
// host and in all, signature checks per host and in all.
type Limits struct {
	RepliesPerSource, RepliesPerHost, RepliesGlobal Rate
	ChecksPerHost, ChecksGlobal                     Rate
}

// Rate is a token bucket: Burst at once, then one every Every.
type Rate struct {
	Every time.Duration
	Burst int
}

// DefaultLimits: a node beacons every 15 s and answers each challenger once per beacon, so
// a polite peer uses a small fraction of each budget; a host runs a few nodes; a segment of
// hundreds of nodes stays well inside the global budgets, which cap a flood's CPU cost (an
// Ed25519 check is tens of microseconds).
var DefaultLimits = Limits{
	RepliesPerSource: Rate{Every: 2 * time.Second, Burst: 4},
	RepliesPerHost:   Rate{Every: 50 * time.Millisecond, Burst: 64},
	RepliesGlobal:    Rate{Every: 5 * time.Millisecond, Burst: 256},
	ChecksPerHost:    Rate{Every: 100 * time.Millisecond, Burst: 16},
	ChecksGlobal:     Rate{Every: 5 * time.Millisecond, Burst: 256},
}

// Peer is a member of this cluster that proved its roster key, as last proven.
type Peer struct {
	NodeID       string
	ClusterID    string
	NodeEndpoint string // its 0xFC endpoint, as its summary states it
	RaftEndpoint string // its consensus endpoint; empty for a learner
	Addr         netip.AddrPort
	Key          ed25519.PublicKey
	ProvenAt     time.Time
}

// Proven is another cluster's summary whose signature verified: who proved it, from where
// and when. Discovery judges it by signature alone; formation decides what it means.
type Proven struct {
	Summary verbs.FleetSummary
	Key     ed25519.PublicKey
	From    netip.AddrPort
	At      time.Time
}

// Heard is one node of the table: what its last beacon claimed and how far it got.
type Heard struct {
	NodeID, ClusterID          string
	NodeEndpoint, RaftEndpoint string
	Addr                       netip.AddrPort
	HeardAt, ProvenAt          time.Time // ProvenAt zero: never proven
	Authenticated              bool
}

var errConfig = errors.New("discovery configuration")

func (c *Config) withDefaults() (Config, error) {
	out := *c
	switch {
	case c.Key == nil || c.Summary == nil || c.Roster == nil:
		return out, errors.Join(errConfig, errors.New("a key, a summary and a roster are required"))
	case c.BeaconPort < 0 || c.BeaconPort > 65535 || c.ReplyPort < 0 || c.ReplyPort > 65535:
		return out, errors.Join(errConfig, errors.New("ports are 0 to 65535"))
	}
	out.Interval = or(c.Interval, DefaultInterval)
	out.ReproveAfter = or(c.ReproveAfter, DefaultReproveAfter)
	out.CookieEvery = or(c.CookieEvery, DefaultCookieEvery)
	l, d := &out.Limits, DefaultLimits
	l.RepliesPerSource, l.RepliesPerHost, l.RepliesGlobal = rate(l.RepliesPerSource, d.RepliesPerSource),
		rate(l.RepliesPerHost, d.RepliesPerHost), rate(l.RepliesGlobal, d.RepliesGlobal)
	l.ChecksPerHost, l.ChecksGlobal = rate(l.ChecksPerHost, d.ChecksPerHost), rate(l.ChecksGlobal, d.ChecksGlobal)
	if out.Log == nil {
		out.Log = slog.New(slog.DiscardHandler)
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.Interfaces == nil {
		out.Interfaces = systemInterfaces
	}
	return out, nil
}

func or(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func rate(r, def Rate) Rate {
	if r.Every <= 0 || r.Burst <= 0 {
		return def
	}
	return r
}
