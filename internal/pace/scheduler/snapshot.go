package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// SnapshotLeases is how many outstanding leases a snapshot lists, oldest
// first (the dashboard's "Leases outstanding", pace-node §6.4).
const SnapshotLeases = 50

// Snapshot is the registry as the dashboard shows it.
type Snapshot struct {
	Taken    time.Time
	Workers  []WorkerRow  // one per registration, by fingerprint then endpoint
	Machines []MachineRow // the grain to total a fleet over
	// Leases are the SnapshotLeases oldest outstanding leases, oldest first.
	Leases            []LeaseRow
	LeasesOutstanding int
	// Unserved are toolchains clients asked for that nobody registered.
	Unserved []UnservedRow
}

// WorkerRow is one registration.
type WorkerRow struct {
	WorkerID, NodeID, Fingerprint, Endpoint, Label, Version string
	Slots, InFlight, Offerable                              int
	Utilization                                             float64 // machine in-flight / slots
	LimitedBy                                               string  // "" when nothing limits it
	RegisteredAge, LastHeartbeatAge                         time.Duration
	LastPickedAge                                           time.Duration // meaningful when Picked
	Picked                                                  bool
}

// MachineRow is one machine, however many toolchains it registered.
type MachineRow struct {
	NodeID        string
	Registrations int
	Slots         int // the largest registered slot count
	InFlight      int
	LastSeenAge   time.Duration
	Capacity      verbs.Capacity
	Load          verbs.Load // as last reported; History is not kept
}

// LeaseRow is one outstanding lease.
type LeaseRow struct {
	Key, Fingerprint, Endpoint string
	Serial                     uint64
	Age, ExpiresIn             time.Duration
}

// UnservedRow is a toolchain asked for with no worker registered.
type UnservedRow struct {
	Fingerprint, Label string
	LastAskedAge       time.Duration
}

// Snapshot copies the registry for display.
func (s *Scheduler) Snapshot() Snapshot {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{Taken: now, LeasesOutstanding: len(s.leases)}
	for _, e := range s.entries {
		snap.Workers = append(snap.Workers, workerRow(e, now))
	}
	slices.SortFunc(snap.Workers, func(a, b WorkerRow) int {
		return cmp.Or(cmp.Compare(a.Fingerprint, b.Fingerprint), cmp.Compare(a.Endpoint, b.Endpoint))
	})
	for _, m := range s.machines {
		snap.Machines = append(snap.Machines, machineRow(m, now))
	}
	slices.SortFunc(snap.Machines, func(a, b MachineRow) int { return cmp.Compare(a.NodeID, b.NodeID) })
	snap.Leases = s.oldestLeasesLocked(now)
	for fp, u := range s.unserved {
		snap.Unserved = append(snap.Unserved, UnservedRow{Fingerprint: fp, Label: u.label, LastAskedAge: now.Sub(u.lastSeen)})
	}
	slices.SortFunc(snap.Unserved, func(a, b UnservedRow) int { return cmp.Compare(a.Fingerprint, b.Fingerprint) })
	return snap
}

func workerRow(e *entry, now time.Time) WorkerRow {
	free, why := offerable(e)
	m := e.machine
	row := WorkerRow{WorkerID: e.id, NodeID: m.nodeID, Fingerprint: e.key.fingerprint, Endpoint: e.key.endpoint,
		Label: e.label, Version: e.version, Slots: e.slots, InFlight: m.inFlight(), Offerable: free,
		LimitedBy: why.String(), RegisteredAge: now.Sub(e.registeredAt), LastHeartbeatAge: now.Sub(e.lastHeartbeat),
		Picked: !e.lastPickedAt.IsZero()}
	if e.slots > 0 {
		row.Utilization = float64(row.InFlight) / float64(e.slots)
	}
	if row.Picked {
		row.LastPickedAge = now.Sub(e.lastPickedAt)
	}
	return row
}

func machineRow(m *machine, now time.Time) MachineRow {
	load := m.load
	load.History = nil
	return MachineRow{NodeID: m.nodeID, Registrations: len(m.entries), Slots: m.maxSlots(),
		InFlight: m.inFlight(), LastSeenAge: now.Sub(m.lastSeen), Capacity: m.capacity, Load: load}
}

func (s *Scheduler) oldestLeasesLocked(now time.Time) []LeaseRow {
	all := make([]*lease, 0, len(s.leases))
	for _, l := range s.leases {
		all = append(all, l)
	}
	slices.SortFunc(all, func(a, b *lease) int {
		return cmp.Or(a.grantedAt.Compare(b.grantedAt), cmp.Compare(a.serial, b.serial))
	})
	rows := make([]LeaseRow, 0, min(len(all), SnapshotLeases))
	for _, l := range all[:min(len(all), SnapshotLeases)] {
		rows = append(rows, LeaseRow{Key: l.key, Fingerprint: l.fingerprint, Endpoint: l.endpoint,
			Serial: l.serial, Age: now.Sub(l.grantedAt), ExpiresIn: l.expiresAt.Sub(now)})
	}
	return rows
}

// Outstanding is the number of leases held.
func (s *Scheduler) Outstanding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.leases)
}
