package peerconn

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// peer is a scripted other end: what it does with its side of the pipe.
type peer func(c net.Conn)

// silent never reads nor writes.
func silent(net.Conn) {}

// readsChallenge reads the challenge, then does nothing.
func readsChallenge(c net.Conn) { c.Read(make([]byte, 1024)) }

// sends reads the challenge and sends b.
func sends(b []byte) peer {
	return func(c net.Conn) {
		readsChallenge(c)
		c.Write(b)
	}
}

// hangsUp reads the challenge and closes, as an older build does.
func hangsUp(c net.Conn) {
	readsChallenge(c)
	c.Close()
}

// acceptAgainst runs v1's Accept against a scripted dialler, returning the
// time it took on the bubble's clock and the error.
func acceptAgainst(t *testing.T, p peer, tweak ...func(*Config)) (*node, time.Duration, error) {
	acc := newNode(t, "v1", v1Key, newRoster(), tweak...)
	a, b := net.Pipe()
	defer b.Close()
	go p(b)
	start := time.Now()
	_, err := acc.ep.Accept(context.Background(), a)
	return acc, time.Since(start), err
}

// challengeFrame is a genuine challenge, optionally at another version.
func challengeFrame(t *testing.T, version byte) []byte {
	h, err := (&peerlink.Member{ID: "v1", Key: v1Key, Roster: peerlink.FromLease(newRoster()), Random: rand.Reader}).Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := h.Challenge()
	c[len(peerlink.Magic)] = version
	return c
}

// pace-consensus §7.3.5, pace-consensus §7.3.6: the acceptor's refusals of
// a dialler that does not speak this handshake, and its 5 s bound.
func TestAcceptorRefusesWhatIsNotAHandshake(t *testing.T) {
	tests := []struct {
		name    string
		peer    peer
		err     error
		counter string
		after   time.Duration // on the bubble's clock
	}{
		{"sends nothing and reads nothing", silent, peerlink.ErrHandshakeTimeout, "connections_refused_handshake_timeout_total", 5 * time.Second},
		{"reads the challenge and sends nothing", readsChallenge, peerlink.ErrHandshakeTimeout, "connections_refused_handshake_timeout_total", 5 * time.Second},
		{"sends half a header and waits", sends([]byte("PRF")), peerlink.ErrHandshakeTimeout, "connections_refused_handshake_timeout_total", 5 * time.Second},
		{"an HTTP request", sends([]byte("GET / HTTP/1.1\r\nHost: v1\r\n\r\n")), peerlink.ErrNotAProof, "connections_refused_no_handshake_total", 0},
		{"a 0xFC frame", sends([]byte{0xFC, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0}), peerlink.ErrNotAProof, "connections_refused_no_handshake_total", 0},
		{"a proof at version 4", sends(append([]byte("PRFT\x04\x02"), 0, 0, 0, 0)), peerlink.ErrNotAProof, "connections_refused_no_handshake_total", 0},
		{"a message before any proof", sends(peerlink.AppendHeader(nil, peerlink.KindMessage, 3)), peerlink.ErrNotAProof, "connections_refused_no_handshake_total", 0},
		{"a proof header then a close", func(c net.Conn) {
			sends(peerlink.AppendHeader(nil, peerlink.KindProof, 100))(c)
			c.Close()
		}, peerlink.ErrNotAProof, "connections_refused_no_handshake_total", 0},
		{"a proof of no grammar", sends(append(peerlink.AppendHeader(nil, peerlink.KindProof, 3), "abc"...)), peerlink.ErrNotAProof, "connections_refused_no_handshake_total", 0},
		{"an older build refusing the challenge", hangsUp, peerlink.ErrNoProof, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				acc, took, err := acceptAgainst(t, tt.peer)
				if !errors.Is(err, tt.err) || took != tt.after {
					t.Fatalf("%v after %v", err, took)
				}
				if got := acc.counts(); !cmp.Equal(got, one(tt.counter)) {
					t.Fatalf("counted %v", got)
				}
			})
		})
	}
}

// The bound is configurable.
func TestHandshakeTimeoutIsConfigurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, took, err := acceptAgainst(t, silent, func(c *Config) { c.HandshakeTimeout = 1500 * time.Millisecond })
		if !errors.Is(err, peerlink.ErrHandshakeTimeout) || took != 1500*time.Millisecond {
			t.Fatalf("%v after %v", err, took)
		}
	})
}

// dialAgainst runs l1's Dial of v1 against a scripted acceptor.
func dialAgainst(t *testing.T, p peer) (*node, time.Duration, error) {
	dial := newNode(t, "l1", l1Key, newRoster())
	a, b := net.Pipe()
	defer a.Close()
	go p(a)
	start := time.Now()
	_, err := dial.ep.Dial(context.Background(), b, "v1", peerlink.LearnerToVoter)
	return dial, time.Since(start), err
}

// pace-consensus §7.3.5, pace-consensus §7.3.6: the dialler's refusals of
// an address that does not speak this handshake, and its 5 s bound.
func TestDiallerRefusesWhatIsNotAChallenge(t *testing.T) {
	tests := []struct {
		name    string
		peer    peer
		err     error
		counter string
		after   time.Duration
	}{
		{"sends nothing", silent, peerlink.ErrHandshakeTimeout, "dials_refused_timeout_total", 5 * time.Second},
		{"closes at once", func(c net.Conn) { c.Close() }, peerlink.ErrNoChallenge, "dials_refused_no_challenge_total", 0},
		{"an HTTP server's greeting", func(c net.Conn) { c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) }, peerlink.ErrNoChallenge, "dials_refused_no_challenge_total", 0},
		{"a version 4 challenge", func(c net.Conn) { c.Write(challengeFrame(t, 4)) }, peerlink.ErrNoChallenge, "dials_refused_no_challenge_total", 0},
		{"a challenge of no grammar", func(c net.Conn) {
			c.Write(append(peerlink.AppendHeader(nil, peerlink.KindChallenge, 2), 0, 0))
		}, peerlink.ErrNoChallenge, "dials_refused_no_challenge_total", 0},
		{"a challenge, then no verdict", func(c net.Conn) {
			c.Write(challengeFrame(t, peerlink.Version))
			c.Read(make([]byte, 1024))
		}, peerlink.ErrHandshakeTimeout, "dials_refused_timeout_total", 5 * time.Second},
		{"a challenge, then a close", func(c net.Conn) {
			c.Write(challengeFrame(t, peerlink.Version))
			c.Read(make([]byte, 1024))
			c.Close()
		}, peerlink.ErrEndedByAcceptor, "dials_ended_by_acceptor_total", 0},
		{"a challenge, then garbage", func(c net.Conn) {
			c.Write(challengeFrame(t, peerlink.Version))
			c.Read(make([]byte, 1024))
			c.Write([]byte("garbage!garbage!"))
		}, peerlink.ErrAcceptorProof, "dials_refused_acceptor_proof_total", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dial, took, err := dialAgainst(t, tt.peer)
				if !errors.Is(err, tt.err) || took != tt.after {
					t.Fatalf("%v after %v", err, took)
				}
				if got := dial.counts(); !cmp.Equal(got, one(tt.counter)) {
					t.Fatalf("counted %v", got)
				}
			})
		})
	}
}

// The acceptor speaks first, before reading anything: its challenge is
// on the wire although the dialler has sent nothing.
func TestAcceptorSpeaksFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan []byte, 1)
		acceptAgainst(t, func(c net.Conn) {
			b := make([]byte, 1024)
			n, _ := c.Read(b)
			got <- b[:n]
		})
		c := <-got
		if !bytes.HasPrefix(c, []byte("PRFT\x05\x01")) || len(c) != peerlink.HeaderLen+2*(4+32) {
			t.Fatalf("first bytes %x", c)
		}
	})
}
