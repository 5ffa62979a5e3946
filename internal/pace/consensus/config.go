package consensus

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// Timing defaults (pace-consensus §7.1: heartbeats every ~50 ms, elections
// after a few hundred ms; raft randomizes the election timeout in [E, 2E)
// ticks).
const (
	DefaultTickInterval    = 50 * time.Millisecond
	DefaultElectionTicks   = 8 // 400–800 ms
	DefaultHeartbeatTicks  = 1
	DefaultSnapshotEvery   = 1000
	DefaultSnapshotCatchUp = 100
)

// Config configures a Node.
type Config struct {
	StateDir  string            // holds formation and raft.db
	NodeID    string            // this node's member id
	PublicKey ed25519.PublicKey // this node's identity key, recorded by Found

	RaftEndpoint string // consensus endpoint peers dial, recorded at founding; "" when unknown
	NodeEndpoint string // 0xFC endpoint; announced as the scheduler endpoint while leading
	// Endpoints, when set, gives the two endpoints as they are now, for the announcement a
	// leader makes of itself: a node whose address moved since it started must not announce
	// the old one (pace-consensus §7.4). nil: RaftEndpoint and NodeEndpoint.
	Endpoints func() (raft, node string)

	Transport Transport // nil: NoTransport

	Ticks          <-chan time.Time // nil: a ticker every TickInterval (tests send ticks themselves)
	TickInterval   time.Duration
	ElectionTicks  int
	HeartbeatTicks int

	SnapshotEvery   uint64 // applied entries between snapshots
	SnapshotCatchUp uint64 // entries kept behind a snapshot for slightly slow followers

	LockTimeout time.Duration    // wait for raft.db's lock; raftstore.DefaultLockTimeout when 0
	Now         func() time.Time // clock for leader contact and announcement order; time.Now when nil
	Rand        io.Reader        // cluster id source; crypto/rand when nil
	Logger      *slog.Logger     // slog.Default when nil
}

func (c Config) withDefaults() Config {
	if c.Transport == nil {
		c.Transport = NoTransport{}
	}
	if c.TickInterval <= 0 {
		c.TickInterval = DefaultTickInterval
	}
	if c.ElectionTicks <= 0 {
		c.ElectionTicks = DefaultElectionTicks
	}
	if c.HeartbeatTicks <= 0 {
		c.HeartbeatTicks = DefaultHeartbeatTicks
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = DefaultSnapshotEvery
	}
	if c.SnapshotCatchUp == 0 {
		c.SnapshotCatchUp = DefaultSnapshotCatchUp
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Endpoints == nil {
		raft, node := c.RaftEndpoint, c.NodeEndpoint
		c.Endpoints = func() (string, string) { return raft, node }
	}
	return c
}

// check refuses a configuration consensus cannot run with, by field.
func (c Config) check() error {
	if c.StateDir == "" {
		return fmt.Errorf("consensus: no state directory")
	}
	if err := fleet.CheckMemberID(c.NodeID); err != nil {
		return fmt.Errorf("consensus: node id: %w", err)
	}
	if err := fleet.CheckPublicKey(c.PublicKey); err != nil {
		return fmt.Errorf("consensus: identity key: %w", err)
	}
	for name, ep := range map[string]string{"consensus endpoint": c.RaftEndpoint, "node endpoint": c.NodeEndpoint} {
		if ep != "" {
			if err := fleet.CheckEndpoint(ep); err != nil {
				return fmt.Errorf("consensus: %s: %w", name, err)
			}
		}
	}
	if c.HeartbeatTicks >= c.ElectionTicks {
		return fmt.Errorf("consensus: election ticks (%d) must exceed heartbeat ticks (%d)", c.ElectionTicks, c.HeartbeatTicks)
	}
	return nil
}
