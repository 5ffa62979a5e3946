package dashboard

import (
	"cmp"
	"slices"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
)

// MaxRows bounds every table of the Model; what a table leaves out is counted in Omitted.
const MaxRows = 500

// Model is the dashboard's content, marshalled as /fleet.json and rendered as /fleet and
// /fleet.txt.
type Model struct {
	GeneratedUnixMs   int64          `json:"generated_unix_ms"`
	NodeID            string         `json:"node"`
	ClusterID         string         `json:"cluster"`
	Term              uint64         `json:"term"`
	KPI               map[string]KPI `json:"kpi"`
	Machines          []MachineRow   `json:"machines"`
	Workers           []WorkerRow    `json:"workers"`
	Leases            []LeaseRow     `json:"leases"`
	LeasesOutstanding int            `json:"leases_outstanding"`
	Refusals          []RefusalRow   `json:"refusals"`
	Unserved          []UnservedRow  `json:"unserved"`
	Conditions        []Condition    `json:"conditions"`
	Settings          Settings       `json:"settings"`
	// Omitted counts the rows a table left out past MaxRows, by table.
	Omitted map[string]int `json:"omitted,omitempty"`
}

// KPI is one figure at a glance: Value of Of (Of null where no whole applies), in Unit.
type KPI struct {
	Value *float64 `json:"value"`
	Unit  string   `json:"unit"`
	Of    *float64 `json:"of"`
}

// KPINames are the KPI keys, in the order the page shows them.
var KPINames = []string{"dispatched", "compiling-now", "cache-hit-rate", "refused", "leases-outstanding", "oldest-heartbeat", "never-picked"}

// MachineRow is one member, with what the scheduler last heard from it.
type MachineRow struct {
	ID                string `json:"id"`
	Role              string `json:"role"` // leader, voter or learner
	NodeEndpoint      string `json:"node_endpoint"`
	ConsensusEndpoint string `json:"consensus_endpoint"`
	Key               string `json:"key"`
	Standing          string `json:"standing"`
	LastHeardS        *int64 `json:"last_heard_s"` // null: never heard by this leader
	Slots             int    `json:"slots"`
	InFlight          int    `json:"in_flight"`
	Registrations     int    `json:"registrations"`
	Version           string `json:"version"`
}

// WorkerRow is one registration (a machine serving three toolchains has three).
type WorkerRow struct {
	Machine     string `json:"machine"`
	Fingerprint string `json:"fingerprint"`
	Toolchain   string `json:"toolchain"`
	Endpoint    string `json:"endpoint"`
	Slots       int    `json:"slots"`
	InFlight    int    `json:"in_flight"`
	Offerable   int    `json:"offerable"`
	LimitedBy   string `json:"limited_by"` // "" when nothing limits it
	// Withdrawn names why slots free on paper are held back (load that is not the fleet's, or
	// a cordon): LEASE answers withdrawn for them. "" when none are.
	Withdrawn      string `json:"withdrawn"`
	RegisteredAgeS int64  `json:"registered_age_s"`
	LastPickedAgeS *int64 `json:"last_picked_age_s"` // null: never picked
	HeartbeatAgeS  int64  `json:"heartbeat_age_s"`
}

// LeaseRow is one outstanding lease, oldest first.
type LeaseRow struct {
	Key        string `json:"key"`
	Toolchain  string `json:"fingerprint"`
	Worker     string `json:"worker"`
	AgeS       int64  `json:"age_s"`
	ExpiresInS int64  `json:"expires_in_s"`
}

// UnservedRow is a toolchain clients asked for that no worker serves.
type UnservedRow struct {
	Fingerprint  string `json:"fingerprint"`
	Toolchain    string `json:"toolchain"`
	LastAskedAgo int64  `json:"last_asked_s"`
}

// Settings are the replicated settings that bear on dispatch.
type Settings struct {
	LeaseLifetimeS int64 `json:"lease_lifetime_s"`
	FleetOpen      bool  `json:"fleet_open"`
}

// Build turns a leader's facts into the dashboard's content. It does no I/O.
func Build(f Facts) Model {
	snap := f.Scheduler
	m := Model{GeneratedUnixMs: f.Now.UnixMilli(), NodeID: f.NodeID, ClusterID: f.ClusterID, Term: f.Term,
		LeasesOutstanding: snap.LeasesOutstanding, Omitted: map[string]int{},
		Settings: Settings{LeaseLifetimeS: int64(f.LeaseLifetime / time.Second), FleetOpen: f.FleetOpen}}
	m.KPI = kpis(f)
	m.Machines = bounded(m.Omitted, "machines", machineRows(f))
	m.Workers = bounded(m.Omitted, "workers", workerRows(snap.Workers))
	for _, l := range snap.Leases {
		m.Leases = append(m.Leases, LeaseRow{Key: l.Key, Toolchain: l.Fingerprint, Worker: l.Endpoint,
			AgeS: seconds(l.Age), ExpiresInS: seconds(l.ExpiresIn)})
	}
	if more := snap.LeasesOutstanding - len(snap.Leases); more > 0 {
		m.Omitted["leases"] = more
	}
	for _, u := range snap.Unserved {
		m.Unserved = append(m.Unserved, UnservedRow{Fingerprint: u.Fingerprint, Toolchain: u.Label, LastAskedAgo: seconds(u.LastAskedAge)})
	}
	m.Unserved = bounded(m.Omitted, "unserved", m.Unserved)
	m.Refusals = refusalRows(f.Counts)
	m.Conditions = conditions(f, m.Machines)
	return m
}

func bounded[T any](omitted map[string]int, table string, rows []T) []T {
	if len(rows) > MaxRows {
		omitted[table] = len(rows) - MaxRows
		return rows[:MaxRows]
	}
	return rows
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

func machineRows(f Facts) []MachineRow {
	heard := map[string]scheduler.MachineRow{}
	for _, r := range f.Scheduler.Machines {
		heard[r.NodeID] = r
	}
	rows := make([]MachineRow, 0, len(f.Members))
	for _, mem := range f.Members {
		row := MachineRow{ID: mem.ID, Role: mem.Seat, NodeEndpoint: mem.NodeEndpoint,
			ConsensusEndpoint: mem.RaftEndpoint, Key: mem.Key}
		if mem.ID == f.NodeID {
			row.Role = "leader"
		}
		h, ok := heard[mem.ID]
		if ok {
			age := seconds(h.LastSeenAge)
			row.LastHeardS, row.Slots, row.InFlight, row.Registrations = &age, h.Slots, h.InFlight, h.Registrations
			row.Version = h.Capacity.Version
		}
		row.Standing = standing(mem, ok)
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b MachineRow) int {
		return cmp.Or(cmp.Compare(roleRank(a.Role), roleRank(b.Role)), cmp.Compare(a.ID, b.ID))
	})
	return rows
}

func roleRank(role string) int {
	return map[string]int{"leader": 0, "voter": 1, "learner": 2}[role]
}

// standing says, in a word or three, whether a member is doing its part.
func standing(m Member, heard bool) string {
	switch {
	case m.PromotionPending:
		return "promotion pending (catching up)"
	case heard && m.Endpoints == "announced":
		return "ok"
	case heard:
		return "heard; endpoint not recorded yet"
	case m.Endpoints == "never-announced":
		return "never announced"
	case m.Endpoints == "cleared":
		return "moved; not announced since"
	}
	return "not heard by this leader"
}

func workerRows(ws []scheduler.WorkerRow) []WorkerRow {
	rows := make([]WorkerRow, 0, len(ws))
	for _, w := range ws {
		row := WorkerRow{Machine: w.NodeID, Fingerprint: w.Fingerprint, Toolchain: w.Label, Endpoint: w.Endpoint,
			Slots: w.Slots, InFlight: w.InFlight, Offerable: w.Offerable, LimitedBy: limitName(w.LimitedBy),
			RegisteredAgeS: seconds(w.RegisteredAge), HeartbeatAgeS: seconds(w.LastHeartbeatAge)}
		if w.Picked {
			age := seconds(w.LastPickedAge)
			row.LastPickedAgeS = &age
		}
		if free := w.Slots - w.InFlight; free > w.Offerable && !fleetWork(w.LimitedBy) {
			row.Withdrawn = limitName(w.LimitedBy)
		}
		rows = append(rows, row)
	}
	return rows
}

// limitName is the scheduler's limit under the name the dashboard shows (pace-node §10.3).
func limitName(l string) string {
	if n, ok := map[string]string{"cpu": "external-cpu", "cordon": "cordoned", "slots": "slots-full"}[l]; ok {
		return n
	}
	return l
}

// fleetWork: a limit of the fleet's own work, answered no-capacity rather than withdrawn.
func fleetWork(l string) bool { return l == "slots" || l == "compile-budget" }
