package dashboard

import (
	"fmt"
	"strings"
	"time"
)

// RefusalRow is one cause a request was refused or a worker lost, with its counter and what to
// check when it climbs.
type RefusalRow struct {
	Cause   string `json:"cause"`
	Count   uint64 `json:"count"`
	Counter string `json:"counter"`
	Hint    string `json:"hint"`
}

type cause struct {
	name, counter, hint string
	count               func(Counts) uint64
}

// causes are the scheduler's refusals (pace-node §6.2, pace-node §6.4) and the node's
// admission refusal, each with the check the troubleshooting table names for it.
var causes = []cause{
	{"no-worker", "pace_dispatch_leases_no_worker_total",
		"No registered worker has the toolchain: fingerprints must match byte for byte; compare the workers' `serving …` startup lines with the client's (Unserved toolchains below).",
		func(c Counts) uint64 { return c.NoWorker }},
	{"all-excluded", "pace_dispatch_leases_all_excluded_total",
		"Every matching worker was on the client's list of workers it could not reach: does each worker's --advertise name an address clients can dial?",
		func(c Counts) uint64 { return c.AllExcluded }},
	{"no-capacity", "pace_dispatch_leases_no_capacity_total",
		"Every matching worker is full of this fleet's own work (slots or compile budget): the fleet is busy, not broken; add slots or machines.",
		func(c Counts) uint64 { return c.NoCapacity }},
	{"withdrawn", "pace_dispatch_leases_withdrawn_total",
		"Matching workers are free on paper but held back by load that is not the fleet's, or a cordon: see Workers' limited-by.",
		func(c Counts) uint64 { return c.Withdrawn }},
	{"already-in-flight", "pace_dispatch_leases_duplicate_total",
		"Another client holds a lease on the same object; a lease left to expire (a Ctrl-C) shows in Leases outstanding, oldest first.",
		func(c Counts) uint64 { return c.Duplicate }},
	{"not-a-member", "pace_node_requests_refused_not_a_member_total",
		"A client's machine is not admitted: does a node run there (PACE_ADDR) to mint its tickets, and is its key admitted? `pacectl explain-admission <machine>` on the scheduler says.",
		func(c Counts) uint64 { return c.NotAMember }},
	{"node-identity-required", "pace_scheduler_requests_refused_node_identity_required_total",
		"A worker never appears: is its key admitted to the cluster? REGISTER from a key the cluster does not hold is refused.",
		func(c Counts) uint64 { return c.NodeIdentityRequired }},
	{"workers-expired", "pace_dispatch_workers_expired_total",
		"Workers appear, then vanish, then reappear: heartbeats are not arriving inside 90 s. Registrations and expiries both climbing is this, not a growing fleet.",
		func(c Counts) uint64 { return c.WorkersExpired }},
	{"leases-released-late", "pace_dispatch_leases_released_late_total",
		"Compiles outlive their lease: raise lease-lifetime (--cluster-set=lease-lifetime=…).",
		func(c Counts) uint64 { return c.ReleasedLate }},
	{"leases-unauthorized", "pace_dispatch_leases_unauthorized_total",
		"A RELEASE carried a token this cluster never signed: a client of another fleet, or a forged token.",
		func(c Counts) uint64 { return c.Unauthorized }},
	{"malformed", "pace_dispatch_leases_malformed_total",
		"LEASE or RELEASE requests that do not parse: a client of another version, or not a pace client.",
		func(c Counts) uint64 { return c.Malformed + c.FieldTooLong }},
	{"registrations-malformed", "pace_dispatch_worker_registrations_malformed_total",
		"REGISTER, HEARTBEAT or WITHDRAW that do not parse: a worker of another version.",
		func(c Counts) uint64 { return c.RegistrationsMalformed }},
	{"identified-caller-required", "pace_scheduler_requests_refused_identified_caller_required_total",
		"Cluster verbs from a caller that proved no machine: run them through pace-node on a member.",
		func(c Counts) uint64 { return c.IdentifiedCallerRequired }},
}

func refusalRows(c Counts) []RefusalRow {
	rows := make([]RefusalRow, 0, len(causes))
	for _, k := range causes {
		rows = append(rows, RefusalRow{Cause: k.name, Count: k.count(c), Counter: k.counter, Hint: k.hint})
	}
	return rows
}

// Condition is one thing worth an operator's attention, raised or clear.
type Condition struct {
	Name   string `json:"name"`
	State  string `json:"state"` // "raised" or "clear"
	Detail string `json:"detail"`
}

// conditions are the live conditions the leader can judge from its own facts.
func conditions(f Facts, machines []MachineRow) []Condition {
	var silent, pending []string
	for _, m := range machines {
		if m.Standing == "promotion pending (catching up)" {
			pending = append(pending, m.ID)
		}
		if m.LastHeardS == nil {
			silent = append(silent, m.ID+" ("+m.Standing+")")
		}
	}
	return []Condition{
		raise("members-not-heard", len(silent) > 0, "members this leader has no announcement or heartbeat from: %s", strings.Join(silent, ", ")),
		raise("promotions-pending", len(pending) > 0, "voters sitting as learners until they hold every committed entry: %s", strings.Join(pending, ", ")),
		raise("unserved-toolchains", len(f.Scheduler.Unserved) > 0, "%d toolchains asked for that no worker serves", len(f.Scheduler.Unserved)),
		raise("no-worker-registered", len(f.Scheduler.Workers) == 0, "no worker is registered: every compile runs on its client"),
		raise("leases-released-late", f.Counts.ReleasedLate > 0, "%d releases came after their lease expired", f.Counts.ReleasedLate),
		raise("enrollment-requests-waiting", len(f.Waiting) > 0, "machines asking to join (pace-node --enroll-list): %s", strings.Join(f.Waiting, ", ")),
		raise("enrollment-window-open", f.AutoApproveLeft > 0, "every machine asking to join is admitted for %s more (--enroll-auto-approve=off ends it)", f.AutoApproveLeft.Round(time.Second)),
		raise("foreign-fleet-visible", len(f.ForeignFleets) > 0, "other established fleets answer on this segment: %s", strings.Join(f.ForeignFleets, ", ")),
	}
}

func raise(name string, raised bool, format string, a ...any) Condition {
	if !raised {
		return Condition{Name: name, State: "clear"}
	}
	return Condition{Name: name, State: "raised", Detail: fmt.Sprintf(format, a...)}
}
