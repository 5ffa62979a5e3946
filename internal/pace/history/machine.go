package history

import (
	"math"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// The machine series the leader keeps rings for — the ones its charts draw — as columns of a
// machine's rows. The other packed series travel on the wire and are not kept.
const (
	colHits = iota
	colMisses
	colCompiles
	colCPUBusy
	colCPUTotal
	colRefusedNoSlot
	colOfferable
	machineCols
)

// column is one kept series: its place in the packed bucket, and whether it is a counter.
type column struct {
	packed  int
	counter bool
}

var machineColumns = [machineCols]column{
	colHits:          {CacheHits, true},
	colMisses:        {CacheMisses, true},
	colCompiles:      {CompilesDone, true},
	colCPUBusy:       {CPUBusyTicks, true},
	colCPUTotal:      {CPUTotalTicks, true},
	colRefusedNoSlot: {CompilesRefusedNoSlot, true},
	colOfferable:     {OfferableSlots, false},
}

// machine is one machine's three rings. Its minute ring holds what the machine sampled as
// sent: a gauge's figure, a counter's raw cumulative count. The hour and day rings fold a
// figure per minute: a gauge's sample, a counter's difference from the minute before — only
// when that minute is held too and the count did not fall (a restart), so a difference is
// never guessed across a gap and each is folded once, when the second of its two minutes
// arrives.
type machine struct {
	minutes, hours, days ring
}

func newMachine() *machine {
	return &machine{
		minutes: newRing(Width, MinutesKept, machineCols),
		hours:   newRing(hourMs, HoursKept, machineCols),
		days:    newRing(dayMs, DaysKept, machineCols),
	}
}

// add records one bucket; false when its minute is held already (a redelivery) or is older
// than the minute ring keeps.
func (m *machine) add(b Bucket) bool {
	if b.StartMs > math.MaxInt64 {
		return false
	}
	p := m.minutes.period(int64(b.StartMs))
	row := m.minutes.row(p, true)
	if row == nil || recorded(row) {
		return false
	}
	packed := verbs.HistorySeries - int(b.Absent)
	for c, col := range machineColumns {
		if col.packed >= packed {
			continue // an older node's bucket: not measured
		}
		v := b.Values[col.packed]
		row[c].set(v)
		if !col.counter {
			m.fold(p, c, v)
			continue
		}
		if d, ok := m.difference(p, c); ok {
			m.fold(p, c, d)
		}
		if d, ok := m.difference(p+1, c); ok {
			m.fold(p+1, c, d)
		}
	}
	return true
}

func recorded(row []slot) bool {
	for _, s := range row {
		if s.Count > 0 {
			return true
		}
	}
	return false
}

// difference is counter column c's rise over minute p: its count at p less its count at p-1,
// when both minutes are held and the count did not fall.
func (m *machine) difference(p int64, c int) (uint64, bool) {
	cur, prev := m.minutes.row(p, false), m.minutes.row(p-1, false)
	if cur == nil || prev == nil || cur[c].Count == 0 || prev[c].Count == 0 || cur[c].High < prev[c].High {
		return 0, false
	}
	return cur[c].High - prev[c].High, true
}

// fold adds minute p's figure for column c to the hour and day holding it.
func (m *machine) fold(p int64, c int, v uint64) {
	ms := p * Width
	for _, r := range [...]*ring{&m.hours, &m.days} {
		if row := r.row(r.period(ms), true); row != nil {
			row[c].fold(v)
		}
	}
}

// sums adds every column's figures over periods [from, to) of ring r (one of m's) into total,
// and how many there were into n (0: unmeasured): a counter's minute differences or folded
// totals, a gauge's samples. One pass over the rows, whatever the columns.
func (m *machine) sums(r *ring, from, to int64, total *[machineCols]uint64, n *[machineCols]uint32) {
	raw := r == &m.minutes
	var prev []slot
	if raw {
		prev = r.row(from-1, false)
	}
	for p := from; p < to; p++ {
		row := r.row(p, false)
		for c, s := range row {
			switch {
			case s.Count == 0:
			case !raw || !machineColumns[c].counter:
				total[c], n[c] = total[c]+s.Total, n[c]+s.Count
			case prev != nil && prev[c].Count > 0 && s.High >= prev[c].High:
				total[c], n[c] = total[c]+s.High-prev[c].High, n[c]+1
			}
		}
		prev = row
	}
}

// newest is the newest minute held, for choosing which machine to forget.
func (m *machine) newest() int64 {
	if !m.minutes.has {
		return math.MinInt64
	}
	return m.minutes.head
}
