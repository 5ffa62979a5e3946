package history

// Dispatch is a LEASE outcome as the leader counts it: a grant, or the refusal that sent the
// client to compile locally.
type Dispatch uint8

// The outcomes, each a leader series.
const (
	Dispatched              Dispatch = iota // a lease granted
	FallbackAlreadyInFlight                 // refused already-in-flight
	FallbackNoWorker                        // refused no-worker: nobody has the toolchain
	FallbackAllExcluded                     // refused no-worker: every match excluded by the client
	FallbackNoCapacity                      // refused no-capacity
	FallbackWithdrawn                       // refused withdrawn
	FallbackSignFailed                      // the grant could not be signed
	dispatchOutcomes
)

// leaderCols is how many leader series there are: one per outcome.
const leaderCols = int(dispatchOutcomes)

// leader is what this node counted while it led, in rings like a machine's. A minute it led in
// is measured (Count 1) even with nothing decided; every other minute is a gap, so windows
// before its term read null, never 0. Decisions count live into the open minute, which is
// folded into the hour and day rings (one figure per minute) when a later minute opens.
type leader struct {
	minutes, hours, days ring
	open                 int64 // the minute being counted into, when hasOpen
	hasOpen              bool
}

func newLeader() *leader {
	return &leader{
		minutes: newRing(Width, MinutesKept, leaderCols),
		hours:   newRing(hourMs, HoursKept, leaderCols),
		days:    newRing(dayMs, DaysKept, leaderCols),
	}
}

// touch opens minute p as led and returns its row. A clock that stepped back keeps counting
// into the open minute.
func (l *leader) touch(p int64) []slot {
	if l.hasOpen && p < l.open {
		p = l.open
	}
	if l.hasOpen && p > l.open {
		l.close()
	}
	row := l.minutes.row(p, true)
	l.open, l.hasOpen = p, true
	for i := range row {
		if row[i].Count == 0 {
			row[i].set(0)
		}
	}
	return row
}

// count adds one decision to minute p.
func (l *leader) count(d Dispatch, p int64) {
	s := &l.touch(p)[d]
	s.set(s.Total + 1)
}

// close folds the open minute into the hour and day holding it.
func (l *leader) close() {
	row := l.minutes.row(l.open, false)
	if row == nil {
		return
	}
	ms := l.open * Width
	for _, r := range [...]*ring{&l.hours, &l.days} {
		if coarse := r.row(r.period(ms), true); coarse != nil {
			for c := range row {
				coarse[c].fold(row[c].Total)
			}
		}
	}
}

// sum is column c's decisions over periods [from, to) of ring r (one of l's), and how many
// minutes were led (0: not leading, a gap). The hour and day rings count the open minute live.
func (l *leader) sum(r *ring, c int, from, to int64) (total uint64, n uint32) {
	for p := from; p < to; p++ {
		if row := r.row(p, false); row != nil && row[c].Count > 0 {
			total, n = total+row[c].Total, n+row[c].Count
		}
	}
	if r == &l.minutes || !l.hasOpen {
		return total, n
	}
	if p := r.period(l.open * Width); p >= from && p < to {
		if row := l.minutes.row(l.open, false); row != nil && row[c].Count > 0 {
			total, n = total+row[c].Total, n+1
		}
	}
	return total, n
}
