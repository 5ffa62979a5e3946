package history

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Ranges lists the view names in order: "1h","2h","8h","24h","7d","1mo","6mo","12mo".
var Ranges = []string{"1h", "2h", "8h", "24h", "7d", "1mo", "6mo", "12mo"}

// Scopes of a series: summed from machines' buckets, or counted by the leader while it leads.
const (
	ScopeMachines = "machines"
	ScopeLeader   = "leader"
)

// View is one range of the fleet's charts, ready to be marshalled as /fleet/series.json.
type View struct {
	Range       string   `json:"range"`
	StepSeconds int64    `json:"step_seconds"`
	StartUnixMs int64    `json:"start_unix_ms"` // start of the first point's step
	Series      []Series `json:"series"`
}

// Series is one chart line of a View.
type Series struct {
	Name  string `json:"name"`
	Unit  string `json:"unit"`
	Scope string `json:"scope"`
	// Points holds one figure per step, oldest first, nil where nobody measured (a gap, or
	// before this leader's term); the last is the current, still-open step.
	Points []*float64 `json:"points"`
}

// ErrUnknownRange and ErrUnknownMachine refuse a view nobody can draw.
var (
	ErrUnknownRange   = errors.New("history: unknown range")
	ErrUnknownMachine = errors.New("history: no history for machine")
)

// rangeSpec is how a range is drawn: points steps of step milliseconds, UTC-aligned, read
// from the ring of that width (the finest ring that holds the whole range).
type rangeSpec struct {
	name   string
	step   int64
	points int
	ring   int64 // the width of the ring read
}

var rangeSpecs = [...]rangeSpec{
	{"1h", Width, 60, Width},
	{"2h", Width, 120, Width},
	{"8h", 5 * Width, 96, Width},
	{"24h", 5 * Width, 288, Width},
	{"7d", hourMs, 168, hourMs},
	{"1mo", 6 * hourMs, 120, hourMs}, // 30 days: exactly the hour ring
	{"6mo", dayMs, 183, dayMs},
	{"12mo", dayMs, 365, dayMs},
}

func lookupRange(name string) (rangeSpec, error) {
	for _, r := range rangeSpecs {
		if r.name == name {
			return r, nil
		}
	}
	return rangeSpec{}, fmt.Errorf("%w %q: the ranges are %s", ErrUnknownRange, name, strings.Join(Ranges, ", "))
}

// View is the fleet's charts over rangeName ending with the step holding now. The machines'
// rings and the leader's are read under their own locks, so drawing never holds up a LEASE.
func (f *Fleet) View(rangeName string, now time.Time) (View, error) {
	spec, err := lookupRange(rangeName)
	if err != nil {
		return View{}, err
	}
	start := spec.start(now.UnixMilli())
	steps := make([]step, spec.points)
	f.mu.Lock()
	for _, m := range f.machines {
		spec.addMachine(steps, start, m)
	}
	f.mu.Unlock()
	f.leaderMu.Lock()
	if f.leader != nil {
		spec.addLeader(steps, start, f.leader)
	}
	f.leaderMu.Unlock()
	return spec.view(fleetSeries, start, steps), nil
}

// MachineView is nodeID's own series over rangeName ending with the step holding now.
func (f *Fleet) MachineView(nodeID, rangeName string, now time.Time) (View, error) {
	spec, err := lookupRange(rangeName)
	if err != nil {
		return View{}, err
	}
	start := spec.start(now.UnixMilli())
	steps := make([]step, spec.points)
	f.mu.Lock()
	m := f.machines[nodeID]
	if m != nil {
		spec.addMachine(steps, start, m)
	}
	f.mu.Unlock()
	if m == nil {
		return View{}, fmt.Errorf("%w %q", ErrUnknownMachine, nodeID)
	}
	return spec.view(machineSeries, start, steps), nil
}

// start is the first step's start for a view whose last step holds now.
func (spec rangeSpec) start(now int64) int64 {
	return (floorDiv(now, spec.step) - int64(spec.points-1)) * spec.step
}

// view reads every series of defs off the steps.
func (spec rangeSpec) view(defs []seriesDef, start int64, steps []step) View {
	v := View{Range: spec.name, StepSeconds: spec.step / 1000, StartUnixMs: start, Series: make([]Series, len(defs))}
	for i, d := range defs {
		v.Series[i] = Series{Name: d.name, Unit: d.unit, Scope: d.scope, Points: make([]*float64, len(steps))}
		for k := range steps {
			if x, ok := d.value(&steps[k]); ok {
				v.Series[i].Points[k] = &x
			}
		}
	}
	return v
}
