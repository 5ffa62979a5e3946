package server

import "time"

// Re-dial pacing for server-dialed workers: jittered exponential backoff, capped, so that
// an unreachable or refusing worker costs a dial a minute at most and many workers that went
// away together (a rack reboot) are not all dialed in the same instant when they return.
const (
	dialMinBackoff = time.Second
	dialMaxBackoff = 60 * time.Second
)

// dialBackoff is one worker's re-dial pacing. Pure: the jitter comes in as a number in
// [0, 1). The zero value is ready.
type dialBackoff struct{ ceiling time.Duration }

// failed returns the wait before the next dial after a failed one: "equal jitter", half the
// current ceiling plus up to half again, with the ceiling doubling per failure from 1 s up
// to 60 s. It is never below half the ceiling, so the backoff cannot collapse to zero.
func (b *dialBackoff) failed(jitter float64) time.Duration {
	if b.ceiling == 0 {
		b.ceiling = dialMinBackoff
	} else {
		b.ceiling = min(b.ceiling*2, dialMaxBackoff)
	}
	return jittered(b.ceiling, jitter)
}

// served resets the pacing after a session that ran, and returns the wait before dialing the
// worker again once that session is over.
func (b *dialBackoff) served(jitter float64) time.Duration {
	b.ceiling = 0
	return jittered(dialMinBackoff, jitter)
}

func jittered(ceiling time.Duration, jitter float64) time.Duration {
	jitter = min(max(jitter, 0), 1)
	return ceiling/2 + time.Duration(jitter*float64(ceiling/2))
}
