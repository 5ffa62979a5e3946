package peerconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// pace-consensus §7.3: over TCP, a learner's link proves both ends and
// carries whole messages both ways, a snapshot-sized one included, with
// nothing counted.
func TestLinkCarriesMessagesBothWaysOverTCP(t *testing.T) {
	roster := newRoster()
	acc, dial := newNode(t, "v1", v1Key, roster), newNode(t, "l1", l1Key, roster)
	r := overTCP(t, acc, dial, "v1", peerlink.LearnerToVoter)
	if r.acceptErr != nil || r.dialErr != nil {
		t.Fatalf("handshake: %v / %v", r.acceptErr, r.dialErr)
	}
	if p := r.accepted.Peer(); p.ID != "l1" || r.accepted.Direction() != peerlink.LearnerToVoter || r.accepted.Role() != peerlink.RoleAcceptor {
		t.Fatalf("acceptor sees %q %v %v", p.ID, r.accepted.Direction(), r.accepted.Role())
	}
	if p := r.dialled.Peer(); p.ID != "v1" || r.dialled.Role() != peerlink.RoleDialler {
		t.Fatalf("dialler sees %q", p.ID)
	}
	big := bytes.Repeat([]byte("snapshot"), 1<<17) // 1 MiB: read in growing steps
	for i, msg := range [][]byte{[]byte("MsgApp"), nil, big} {
		up := readAsync(r.accepted)
		if err := r.dialled.WriteMessage(msg); err != nil {
			t.Fatalf("dialler write %d: %v", i, err)
		}
		if got := await(t, up); got.err != nil || !bytes.Equal(got.msg, msg) {
			t.Fatalf("acceptor read %d: %d bytes, %v", i, len(got.msg), got.err)
		}
		down := readAsync(r.dialled)
		if err := r.accepted.WriteMessage(msg); err != nil {
			t.Fatalf("acceptor write %d: %v", i, err)
		}
		if got := await(t, down); got.err != nil || !bytes.Equal(got.msg, msg) {
			t.Fatalf("dialler read %d: %d bytes, %v", i, len(got.msg), got.err)
		}
	}
	if len(acc.counts())+len(dial.counts()) != 0 {
		t.Fatalf("counted %v / %v", acc.counts(), dial.counts())
	}
}

// DialTCP opens the connection itself; a refused connect is not counted.
func TestDialTCP(t *testing.T) {
	roster := newRoster()
	acc, dial := newNode(t, "v1", v1Key, roster), newNode(t, "l1", l1Key, roster)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan error, 1)
	go func() {
		raw, err := l.Accept()
		if err == nil {
			var c *Conn
			if c, err = acc.ep.Accept(testContext(t), raw); err == nil {
				defer c.Close()
				_, err = c.ReadMessage()
			}
		}
		accepted <- err
	}()
	c, err := dial.ep.DialTCP(testContext(t), l.Addr().String(), "v1", peerlink.VoterToVoter)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage([]byte("MsgHeartbeat")); err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	c.Close()
	l.Close()
	if _, err := dial.ep.DialTCP(testContext(t), l.Addr().String(), "v1", peerlink.VoterToVoter); err == nil || len(dial.counts()) != 0 {
		t.Fatalf("dial of a closed port: %v, counted %v", err, dial.counts())
	}
}

// One goroutine reads while another writes, on both ends at once.
func TestConcurrentReadersAndWriters(t *testing.T) {
	_, _, r := pair(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, ends := range [][2]*Conn{{r.dialled, r.accepted}, {r.accepted, r.dialled}} {
		from, to := ends[0], ends[1]
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range n {
				if err := from.WriteMessage([]byte(fmt.Sprint(i))); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range n {
				msg, err := to.ReadMessage()
				if err != nil || string(msg) != fmt.Sprint(i) {
					errs <- fmt.Errorf("message %d: %q %v", i, msg, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// pace-consensus §7.3.5: on a voter-to-voter link only the dialler sends;
// the acceptor's attempt is refused and the link stays up.
func TestVoterToVoterLinkIsOneWay(t *testing.T) {
	roster := newRoster()
	r := overPipe(t, newNode(t, "v1", v1Key, roster), newNode(t, "v2", v2Key, roster), "v1", peerlink.VoterToVoter)
	if r.acceptErr != nil || r.dialErr != nil {
		t.Fatal(r.acceptErr, r.dialErr)
	}
	if err := r.accepted.WriteMessage([]byte("vote")); !errors.Is(err, peerlink.ErrOneWay) {
		t.Fatalf("acceptor write: %v", err)
	}
	up := readAsync(r.accepted)
	if err := r.dialled.WriteMessage([]byte("MsgHeartbeat")); err != nil {
		t.Fatal(err)
	}
	if got := await(t, up); got.err != nil || string(got.msg) != "MsgHeartbeat" {
		t.Fatalf("after the refused write: %q %v", got.msg, got.err)
	}
}

// A message over the cap is refused before anything is sent; the link
// stays up.
func TestOversizedMessageIsRefusedBeforeSending(t *testing.T) {
	_, _, r := pair(t, func(c *Config) { c.Member.MaxMessage = 16 })
	if err := r.dialled.WriteMessage(make([]byte, 17)); !errors.Is(err, peerlink.ErrMessageTooLarge) {
		t.Fatalf("%v", err)
	}
	up := readAsync(r.accepted)
	if err := r.dialled.WriteMessage(make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if got := await(t, up); got.err != nil {
		t.Fatal(got.err)
	}
}

// Closing one end: the other reads io.EOF, counted nowhere; Err says why
// on both.
func TestCloseIsNoRefusal(t *testing.T) {
	acc, dial, r := pair(t)
	up := readAsync(r.accepted)
	r.dialled.Close()
	if got := await(t, up); !errors.Is(got.err, io.EOF) || !errors.Is(got.err, ErrClosed) {
		t.Fatalf("read after the peer closed: %v", got.err)
	}
	if err := r.dialled.WriteMessage([]byte("x")); !errors.Is(err, ErrClosed) || !errors.Is(r.dialled.Err(), ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
	if len(acc.counts())+len(dial.counts()) != 0 {
		t.Fatalf("counted %v / %v", acc.counts(), dial.counts())
	}
}

// A cancelled context ends a handshake uncounted.
func TestCancelledHandshakeIsNotCounted(t *testing.T) {
	roster := newRoster()
	acc := newNode(t, "v1", v1Key, roster)
	a, b := net.Pipe()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := acc.ep.Accept(ctx, a); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if !cmp.Equal(acc.counts(), map[string]uint64{}) {
		t.Fatalf("counted %v", acc.counts())
	}
}

func TestEndpointNeedsAMember(t *testing.T) {
	if _, err := NewEndpoint(Config{}); !errors.Is(err, peerlink.ErrBadConfig) {
		t.Fatalf("%v", err)
	}
}
