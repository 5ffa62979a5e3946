package history

// How many slots each ring keeps, and their widths: a day of minutes, thirty days of hours,
// 400 days (a year and its neighbours) of days.
const (
	MinutesKept       = 1440
	HoursKept         = 720
	DaysKept          = 400
	hourMs      int64 = 60 * Width
	dayMs       int64 = 24 * hourMs
)

// slot is one bucket of a ring for one series: the lowest, highest and summed figure folded
// into it and how many were (its coverage; 0 is a gap, never a zero).
type slot struct {
	Low, High, Total uint64
	Count            uint32
}

// fold adds one figure.
func (s *slot) fold(v uint64) {
	if s.Count == 0 {
		s.Low, s.High = v, v
	} else {
		s.Low, s.High = min(s.Low, v), max(s.High, v)
	}
	s.Total += v
	s.Count++
}

// set makes v the slot's only figure.
func (s *slot) set(v uint64) { *s = slot{Low: v, High: v, Total: v, Count: 1} }

// ring is a fixed window of periods, each a row of one slot per series, preallocated: the
// newest period held is head, and a period size or more behind it is gone. Periods are
// counted from the Unix epoch in units of width, so every ring's slots are UTC-aligned.
type ring struct {
	width int64 // milliseconds a period spans
	size  int64 // periods kept
	cols  int   // series per row
	head  int64 // the newest period held, when has
	has   bool
	slots []slot // size rows of cols
}

func newRing(width, size int64, cols int) ring {
	return ring{width: width, size: size, cols: cols, slots: make([]slot, size*int64(cols))}
}

// period is the period holding the instant ms.
func (r *ring) period(ms int64) int64 { return floorDiv(ms, r.width) }

// row is period p's slots. A period newer than head moves the window forward (clearing the
// periods it passes) when advance, else has no row; one the window has left has none either.
func (r *ring) row(p int64, advance bool) []slot {
	switch {
	case !r.has || p > r.head:
		if !advance {
			return nil
		}
		r.advance(p)
	case p <= r.head-r.size:
		return nil
	}
	return r.at(p)
}

func (r *ring) at(p int64) []slot {
	i := int(floorMod(p, r.size)) * r.cols
	return r.slots[i : i+r.cols : i+r.cols]
}

// advance makes p the newest period, clearing what the window passes over.
func (r *ring) advance(p int64) {
	if r.has && p-r.head < r.size {
		for q := r.head + 1; q <= p; q++ {
			clear(r.at(q))
		}
	} else {
		clear(r.slots)
	}
	r.head, r.has = p, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
