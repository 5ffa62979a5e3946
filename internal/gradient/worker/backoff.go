package worker

import "time"

// Reconnect pacing of gradient-protocol §4.5 and gradient-server §6.5.
const (
	MinBackoff = time.Second
	MaxBackoff = 60 * time.Second
)

// SessionOutcome is how a connection attempt ended, for the reconnect pacing.
type SessionOutcome uint8

const (
	// Served: the handshake succeeded and the session ran (and then ended some way other than
	// the server draining it).
	Served SessionOutcome = iota
	// Refused: the connect or handshake failed, or the server rejected the session.
	Refused
	// Drained: the server sent Draining.
	Drained
)

// Backoff paces reconnects: 1 s after a served session, doubling after each refused or
// drained one up to 60 s, so that a stale session still holding the 496 slot does not cause
// a reconnect storm. The zero value is ready.
type Backoff struct{ next time.Duration }

// After returns how long to wait before the next attempt, given how the last one ended.
func (b *Backoff) After(o SessionOutcome) time.Duration {
	if b.next == 0 || o == Served {
		b.next = MinBackoff
	}
	d := b.next
	b.next = min(b.next*2, MaxBackoff)
	return d
}
