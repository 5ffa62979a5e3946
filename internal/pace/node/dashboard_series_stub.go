package node

// A stand-in for the fleet's chart views until history's own (fleetSeries over the history
// rings) is merged: delete this file, drop dashboardSource.series and have
// dashboardSource.Series return n.fleetSeries(rangeName, now). It answers the same JSON shape
// (pace-node §10.3), from the day of minutes history.Fleet holds and a per-minute tally of the
// leader's grants and refusals taken every 5 s while it leads.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/dashboard"
	"github.com/buildfleet/buildfleet/internal/pace/history"
)

type stubView struct {
	Range       string       `json:"range"`
	StepSeconds int64        `json:"step_seconds"`
	StartUnixMs int64        `json:"start_unix_ms"`
	Series      []stubSeries `json:"series"`
}

type stubSeries struct {
	Name   string     `json:"name"`
	Unit   string     `json:"unit"`
	Scope  string     `json:"scope"`
	Points []*float64 `json:"points"`
}

// stubRanges: each range's step and number of points.
var stubRanges = map[string][2]int64{"1h": {60, 60}, "2h": {60, 120}, "8h": {300, 96}, "24h": {300, 288},
	"7d": {3600, 168}, "1mo": {21600, 120}, "6mo": {86400, 183}, "12mo": {86400, 365}}

// stubMinute is the leader's tally of one minute: counter values when it began and when last seen.
type stubMinute struct {
	start      int64
	base, last [2]uint64 // granted, refused
}

type seriesStub struct {
	n       *Node
	mu      sync.Mutex
	minutes []stubMinute // at most history.MinutesKept, oldest first
	leading bool
}

func (n *Node) startSeriesStub(ctx context.Context) *seriesStub {
	s := &seriesStub{n: n}
	s.observe(n.now())
	n.goRun(func() { every(ctx, 5*time.Second, func() { s.observe(n.now()) }) })
	return s
}

// observe tallies the scheduler's grants and refusals into the current minute while leading.
func (s *seriesStub) observe(now time.Time) {
	c := s.n.sched.Counters()
	cur := [2]uint64{c.LeasesGranted.Load(), c.LeasesNoWorker.Load() + c.LeasesAllExcluded.Load() +
		c.LeasesNoCapacity.Load() + c.LeasesWithdrawn.Load() + c.LeasesDuplicate.Load()}
	leading := s.n.cons.IsLeader()
	s.mu.Lock()
	defer s.mu.Unlock()
	wasLeading := s.leading
	s.leading = leading
	if !leading {
		return
	}
	start := history.BucketStart(now.UnixMilli())
	k := len(s.minutes)
	if k > 0 && s.minutes[k-1].start == start {
		s.minutes[k-1].last = cur
		return
	}
	base := cur
	if wasLeading && k > 0 && s.minutes[k-1].start == start-history.Width {
		base = s.minutes[k-1].last // what came after the last look at the previous minute
	}
	if k == history.MinutesKept {
		s.minutes = slices.Delete(s.minutes, 0, 1)
	}
	s.minutes = append(s.minutes, stubMinute{start: start, base: base, last: cur})
}

func (s *seriesStub) view(rangeName string, now time.Time) (stubView, error) {
	shape, ok := stubRanges[rangeName]
	if !ok {
		return stubView{}, fmt.Errorf("unknown range %q; valid ranges: %s", rangeName, strings.Join(dashboard.Ranges, ", "))
	}
	s.observe(now)
	stepMs, count := shape[0]*1000, shape[1]
	start := now.UnixMilli() - now.UnixMilli()%stepMs - (count-1)*stepMs
	g := grid{start: start, stepMs: stepMs, count: count}
	v := stubView{Range: rangeName, StepSeconds: shape[0], StartUnixMs: start}
	dispatched, fallbacks := g.points(), g.points()
	s.mu.Lock()
	for _, m := range s.minutes {
		g.add(dispatched, m.start, float64(m.last[0]-m.base[0]))
		g.add(fallbacks, m.start, float64(m.last[1]-m.base[1]))
	}
	s.mu.Unlock()
	hits, misses, compiles, slots := s.machineSeries(g)
	v.Series = []stubSeries{
		{"hits", "hits", "machines", hits}, {"misses", "misses", "machines", misses},
		{"compiles", "compiles", "machines", compiles}, {"dispatched", "leases", "leader", dispatched},
		{"local_fallbacks", "requests", "leader", fallbacks}, {"offerable_slots", "slots", "machines", slots},
	}
	return v, nil
}

// machineSeries sums every machine's minutes into the grid: counters as the difference from
// the minute before (none across a gap or a restart), the slot gauge as each machine's last
// sample in a step.
func (s *seriesStub) machineSeries(g grid) (hits, misses, compiles, slots []*float64) {
	hits, misses, compiles, slots = g.points(), g.points(), g.points(), g.points()
	for _, id := range s.n.fleetHistory.Machines() {
		buckets := s.n.fleetHistory.Machine(id)
		last := map[int64]float64{}
		for i, b := range buckets {
			at := int64(b.StartMs)
			if idx, ok := g.index(at); ok {
				last[idx] = float64(b.Values[history.OfferableSlots])
			}
			if i == 0 || int64(b.StartMs-buckets[i-1].StartMs) != history.Width {
				continue
			}
			prev := buckets[i-1].Values
			for series, k := range map[*[]*float64]int{&hits: history.CacheHits, &misses: history.CacheMisses, &compiles: history.CompilesDone} {
				if b.Values[k] >= prev[k] {
					g.add(*series, at, float64(b.Values[k]-prev[k]))
				}
			}
		}
		for idx, v := range last {
			g.addAt(slots, idx, v)
		}
	}
	return hits, misses, compiles, slots
}

// grid places minutes into a view's steps.
type grid struct{ start, stepMs, count int64 }

func (g grid) points() []*float64 { return make([]*float64, g.count) }

func (g grid) index(ms int64) (int64, bool) {
	i := (ms - g.start) / g.stepMs
	return i, ms >= g.start && i < g.count
}

func (g grid) add(points []*float64, ms int64, v float64) {
	if i, ok := g.index(ms); ok {
		g.addAt(points, i, v)
	}
}

func (g grid) addAt(points []*float64, i int64, v float64) {
	if points[i] == nil {
		points[i] = new(float64)
	}
	*points[i] += v
}
