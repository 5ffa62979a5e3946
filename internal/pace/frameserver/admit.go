package frameserver

import (
	"net"
	"net/netip"
	"time"
)

// displaceAfter is how long a connection must have waited for a request
// (or sat in an unfinished header) before a newcomer may take its slot: a
// client between two requests of a burst is never displaced, a connection
// held open to take a slot is.
const defaultDisplaceAfter = time.Second

// orDefault is d for a zero v; negative values (none) pass through.
func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// admit starts serving raw, or closes it when its address is at its cap,
// the server is full with nothing to displace, or shutting down.
func (s *Server) admit(raw net.Conn) {
	src := sourceKey(raw.RemoteAddr())
	s.mu.Lock()
	reject := s.refusal(src)
	if reject != 0 || s.shuttingDown.Load() {
		s.mu.Unlock()
		if reject != 0 {
			// Counted before the close, so a client that sees the close also sees the count.
			s.cfg.Observer.ConnRejected(reject)
		}
		raw.Close()
		return
	}
	c := newConn(s, raw, src)
	s.conns[c] = struct{}{}
	if src.IsValid() {
		s.perAddr[src]++
	}
	s.wg.Add(1)
	s.mu.Unlock()
	s.cfg.Observer.ConnAccepted()
	go c.serve()
}

// refusal decides, under mu, whether a newcomer from src is turned away;
// at the total cap it first tries to displace a connection.
func (s *Server) refusal(src netip.Addr) RejectReason {
	held := s.perAddr[src]
	if src.IsValid() && s.cfg.MaxConnsPerAddr > 0 && held >= s.cfg.MaxConnsPerAddr {
		return RejectedPerAddress
	}
	if s.cfg.MaxConns <= 0 || len(s.conns)-s.displacing < s.cfg.MaxConns {
		return 0
	}
	if src.IsValid() && s.displaceFor(held) {
		return 0
	}
	return RejectedAtCapacity
}

// displaceFor picks, under mu, the connection that has waited longest (idle,
// or inside a header) among those of the address holding the most, when that
// address holds more than held+1 (the newcomer's address after admission),
// and ends it. It reports whether one was found.
func (s *Server) displaceFor(held int) bool {
	cutoff := time.Now().Add(-s.displaceAfter).UnixNano()
	var victim *Conn
	victimHeld := held + 1
	for c := range s.conns {
		since, ok := c.displaceable()
		if !ok || since > cutoff {
			continue
		}
		n := s.perAddr[c.src]
		if n > victimHeld || n == victimHeld && victim != nil && since < victim.phaseSince.Load() {
			victim, victimHeld = c, n
		}
	}
	if victim == nil {
		return false
	}
	s.displacing++
	victim.displace()
	return true
}

// forget removes a finished connection from the tables; its goroutine then
// calls wg.Done.
func (s *Server) forget(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if c.src.IsValid() {
		if s.perAddr[c.src]--; s.perAddr[c.src] <= 0 {
			delete(s.perAddr, c.src)
		}
	}
	if c.displaced.Load() {
		s.displacing--
	}
	s.mu.Unlock()
}
