package main

import (
	"bufio"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// clientCodecs are what pace-cc offers in its LEASE, so the scheduler does the same work.
var clientCodecs = wire.NewCodecList(wire.CodecZstd, wire.CodecLZ4)

// maxReply bounds a reply this client reads: a grant is a few hundred bytes.
const maxReply = 64 << 10

// conn is one connection with its reply reader; nil nc means "dial on next use".
type conn struct {
	nc       net.Conn
	br       *bufio.Reader
	deadline time.Time // the I/O deadline currently set on nc
}

// session is one client: its two persistent connections (or none with -fresh-conns), its key
// source and its reused request buffers.
type session struct {
	cfg            config
	lease, release conn
	rng            *rand.ChaCha8
	raw            [32]byte
	key            [64]byte
	payload, frame []byte
}

func newSession(c config) (*session, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("seeding keys: %w", err)
	}
	s := &session{cfg: c, rng: rand.NewChaCha8(seed)}
	if c.freshConns {
		return s, nil
	}
	var err error
	if s.lease, err = dial(c.addr); err != nil {
		return nil, err
	}
	if s.release, err = dial(c.addr); err != nil {
		s.lease.close()
		return nil, err
	}
	return s, nil
}

func (s *session) close() {
	s.lease.close()
	s.release.close()
}

func dial(addr string) (conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return conn{}, fmt.Errorf("dialling %s: %w", addr, err)
	}
	return conn{nc: nc, br: bufio.NewReaderSize(nc, 4096)}, nil
}

// arm makes sure the next exchange has at least half of timeout before its deadline. Moving
// a deadline is a runtime timer update, so it is done only when half of it has been used up,
// not on every exchange: the load generator's own cost competes with the node for the cores.
func (c *conn) arm(timeout time.Duration) {
	now := time.Now()
	if c.deadline.Sub(now) >= timeout/2 {
		return
	}
	c.deadline = now.Add(timeout)
	c.nc.SetDeadline(c.deadline)
}

func (c *conn) close() {
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
}

// nextKey is hex of 32 fresh random bytes, the shape of a real cache key.
func (s *session) nextKey() string {
	s.rng.Read(s.raw[:])
	hex.Encode(s.key[:], s.raw[:])
	return string(s.key[:])
}

// roundTrip is one LEASE and, when granted, its RELEASE. done reports a granted lease that was
// released (or refused on release); a refusal is counted, never an error.
func (s *session) roundTrip(t *tally) (done bool, err error) {
	key := s.nextKey()
	s.payload = verbs.LeaseRequest{Fingerprint: s.cfg.fingerprint, Key: key, Codecs: clientCodecs}.Append(s.payload[:0])
	payload, refused, err := s.exchange(&s.lease, wire.OpLease, s.payload)
	if err != nil {
		return false, err
	}
	if refused != nil {
		t.leaseRefused[refused.Code]++
		t.refusedRequests++
		return false, nil
	}
	grant, err := verbs.ParseLeaseGrant(payload)
	if err != nil {
		return false, fmt.Errorf("lease grant: %w", err)
	}
	t.granted++
	s.payload = verbs.ReleaseRequest{Token: grant.Token, Key: key}.Append(s.payload[:0])
	if _, refused, err = s.exchange(&s.release, wire.OpRelease, s.payload); err != nil {
		return false, err
	}
	if refused != nil {
		t.releaseRefused[refused.Code]++
		t.refusedRequests++
	} else {
		t.released++
	}
	return true, nil
}

// exchange sends one request on c (dialling a fresh connection for it with -fresh-conns) and
// reads its terminal reply. A refusal is returned as refused; err is an I/O or protocol fault.
func (s *session) exchange(c *conn, op wire.Op, payload []byte) (ok []byte, refused *wire.Refusal, err error) {
	if s.cfg.freshConns {
		if *c, err = dial(s.cfg.addr); err != nil {
			return nil, nil, err
		}
		defer c.close()
	}
	c.arm(s.cfg.timeout)
	s.frame = wire.AppendRequestHeader(s.frame[:0], wire.NewRequestHeader(op, uint32(len(payload))))
	s.frame = append(s.frame, payload...)
	if _, err := c.nc.Write(s.frame); err != nil {
		return nil, nil, fmt.Errorf("sending %s: %w", op, err)
	}
	_, body, err := wire.ReadReply(c.br, op, maxReply, nil)
	var ref wire.Refusal
	switch {
	case errors.As(err, &ref):
		return nil, &ref, nil
	case err != nil:
		return nil, nil, fmt.Errorf("%s reply: %w", op, err)
	}
	return body, nil, nil
}
