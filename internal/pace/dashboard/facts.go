package dashboard

import (
	"github.com/buildfleet/buildfleet/internal/pace/history"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
)

// Source is what the dashboard asks of its node.
type Source interface {
	// Leadership says whether this node leads, and if not, who does.
	Leadership() Leadership
	// Facts are the figures the tables are built from, read at now; asked only while leading.
	Facts(now time.Time) Facts
	// Series is one range of the fleet's charts, marshalled as /fleet/series.json: the
	// history.View shape (range, step_seconds, start_unix_ms, series of name, unit, scope,
	// points). rangeName is one of Ranges.
	Series(rangeName string, now time.Time) (any, error)
}

// Ranges are the chart ranges /fleet/series.json accepts, shortest first.
var Ranges = history.Ranges

// Leadership is who answers the dashboard.
type Leadership struct {
	Leading bool
	NodeID  string // this node
	// LeaderID is the leader this node knows ("" during an election); LeaderScheduler is the
	// scheduler endpoint it recorded when it last announced as leader ("" when it never did).
	LeaderID, LeaderScheduler string
}

// Facts are a leader's raw figures at one instant.
type Facts struct {
	Now           time.Time
	NodeID        string
	ClusterID     string
	Term          uint64
	Members       []Member
	Scheduler     scheduler.Snapshot
	Counts        Counts
	LeaseLifetime time.Duration
	FleetOpen     bool
	// Waiting are the machines asking to join that no operator decided yet; AutoApproveLeft
	// is how long the automatic enrollment window stays open (0: closed).
	Waiting         []string
	AutoApproveLeft time.Duration
	// ForeignFleets are other established fleets discovery proved on this segment lately.
	ForeignFleets []string
}

// Member is one member record of the applied fleet state.
type Member struct {
	ID               string
	Seat             string // "voter" or "learner"
	PromotionPending bool
	RaftEndpoint     string
	NodeEndpoint     string // "" until announced
	Endpoints        string // "announced", "never-announced" or "cleared"
	Key              string // the key's 43-character text
}

// Counts are the leader's counters the refusal table and the KPIs read (pace-node §10.6).
type Counts struct {
	Granted, Released, NoWorker, AllExcluded, NoCapacity, Withdrawn, Duplicate uint64
	Reclaimed, Unauthorized, ReleasedLate, Malformed, FieldTooLong             uint64
	Registrations, RegistrationsMalformed, WorkersExpired, WorkersWithdrawn    uint64
	NodeIdentityRequired, IdentifiedCallerRequired, NotAMember                 uint64
}

// leaseRefusals are the LEASE answers that send a client to compile locally.
func (c Counts) leaseRefusals() uint64 {
	return c.NoWorker + c.AllExcluded + c.NoCapacity + c.Withdrawn + c.Duplicate
}
