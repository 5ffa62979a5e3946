package scheduler

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Scheduler is one leader's registry and lease table. A node creates one
// when it becomes leader and drops it when it stops leading.
type Scheduler struct {
	cfg      Config
	counters Counters
	// mismatchLogs counts endpoint mismatches logged so far.
	mismatchLogs atomic.Int64

	mu            sync.Mutex
	machines      map[string]*machine // by proven node id
	entries       map[entryKey]*entry
	byID          map[string]*entry
	byFingerprint map[string]*group // the LEASE index, a heap per fingerprint
	leases        map[string]*lease // by object key
	expiry        leaseHeap
	retired       retiredLeases
	unserved      map[string]unservedToolchain
	serial        uint64 // last lease serial issued
	pickSeq       uint64 // last pick sequence number
}

type entryKey struct{ fingerprint, endpoint string }

// entry is one registration: one toolchain at one endpoint.
type entry struct {
	id       string
	key      entryKey
	machine  *machine
	slots    int
	codecs   wire.CodecList
	label    string
	version  string
	dialHint string // precomputed at register/heartbeat time

	registeredAt  time.Time
	lastHeartbeat time.Time
	lastPickedAt  time.Time // zero: never picked
	pickSeq       uint64    // the tie-break: least recently picked first
	groupIndex    int       // position in byFingerprint[key.fingerprint]; -1 when out

	// Cached decision figures, kept current by refreshMachineLocked.
	free int
	why  limitedBy
}

// machine is what all of one node's registrations share.
type machine struct {
	nodeID   string
	key      []byte
	addr     netip.Addr   // where the scheduler last saw it
	ownAddrs []netip.Addr // interface addresses it reports as its own
	entries  []*entry
	lastSeen time.Time

	// In-flight = reported + pending (see the package doc).
	reported int
	pending  int
	gen      uint64 // heartbeat generation; a lease records the one it was granted in

	capacity    verbs.Capacity
	load        verbs.Load
	limits      loadLimits
	historyHigh uint64 // highest history bucket start delivered
}

func (m *machine) inFlight() int { return m.reported + m.pending }

// maxSlots is the largest registered slot count among its entries.
func (m *machine) maxSlots() int {
	n := 0
	for _, e := range m.entries {
		n = max(n, e.slots)
	}
	return n
}

// clampInFlight keeps in-flight within the largest registered slot count
// after a registration shrank it. A machine with no entries keeps its
// figure: it is about to register again (an address move), and nothing
// can be granted on it meanwhile.
func (m *machine) clampInFlight() {
	if len(m.entries) == 0 {
		return
	}
	if over := m.inFlight() - m.maxSlots(); over > 0 {
		cut := min(over, m.reported)
		m.reported -= cut
		m.pending -= over - cut
	}
}

// lease is one outstanding grant.
type lease struct {
	key         string
	token       string // empty until signed
	serial      uint64
	entryID     string
	endpoint    string
	fingerprint string
	machine     *machine
	gen         uint64 // the machine's heartbeat generation at grant time
	grantedAt   time.Time
	expiresAt   time.Time
	heapIndex   int // position in the expiry heap; -1 once removed
}

type unservedToolchain struct {
	label    string
	lastSeen time.Time
}

// New returns an empty scheduler.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Scheduler{
		cfg:           cfg,
		machines:      make(map[string]*machine),
		entries:       make(map[entryKey]*entry),
		byID:          make(map[string]*entry),
		byFingerprint: make(map[string]*group),
		leases:        make(map[string]*lease),
		retired:       newRetiredLeases(cfg.RetainExpired),
		unserved:      make(map[string]unservedToolchain),
	}, nil
}

// Counters returns the scheduler's counters for export.
func (s *Scheduler) Counters() *Counters { return &s.counters }

// ClusterID is the cluster this scheduler grants for.
func (s *Scheduler) ClusterID() string { return s.cfg.ClusterID }

// live reports whether an entry has heartbeated within the timeout.
func (s *Scheduler) live(e *entry, now time.Time) bool {
	return now.Sub(e.lastHeartbeat) <= s.cfg.HeartbeatTimeout
}
