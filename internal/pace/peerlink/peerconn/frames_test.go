package peerconn

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
)

// tap records what an end writes and, once armed, flips a bit of the next
// tag it writes (a Conn writes header, payload and tag apart here, since a
// tap offers no vectored write).
type tap struct {
	net.Conn
	mu      sync.Mutex
	written bytes.Buffer
	flip    bool
}

func (c *tap) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.written.Write(p)
	if c.flip && len(p) == peerlink.TagLen {
		c.flip = false
		p = bytes.Clone(p)
		p[len(p)-1] ^= 1
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// since returns what was written after mark.
func (c *tap) since(mark int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.written.Bytes()[mark:])
}

func (c *tap) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written.Len()
}

func (c *tap) arm() {
	c.mu.Lock()
	c.flip = true
	c.mu.Unlock()
}

// tapped is a learner link whose two raw ends the test can also write to.
type tapped struct {
	acc, dial       *node
	r               result
	accRaw, dialRaw *tap
}

func newTapped(t *testing.T, tweak ...func(*Config)) tapped {
	roster := newRoster()
	acc, dial := newNode(t, "v1", v1Key, roster, tweak...), newNode(t, "l1", l1Key, roster, tweak...)
	a, b := net.Pipe()
	ta, tb := &tap{Conn: a}, &tap{Conn: b}
	r := connect(t, acc, dial, "v1", peerlink.LearnerToVoter, ta, tb)
	if r.acceptErr != nil || r.dialErr != nil {
		t.Fatal(r.acceptErr, r.dialErr)
	}
	return tapped{acc: acc, dial: dial, r: r, accRaw: ta, dialRaw: tb}
}

// sent sends msg from c and returns the frame's bytes as they crossed.
func (l tapped) sent(t *testing.T, from *Conn, raw *tap, to *Conn, msg []byte) []byte {
	t.Helper()
	mark := raw.mark()
	got := readAsync(to)
	if err := from.WriteMessage(msg); err != nil {
		t.Fatal(err)
	}
	if r := await(t, got); r.err != nil || !bytes.Equal(r.msg, msg) {
		t.Fatalf("delivery: %v", r.err)
	}
	return raw.since(mark)
}

// pace-consensus §7.3.6: frames a proven link's reader cannot use, injected
// on the wire, end the link under their own counter on whichever end reads
// them (the dialler reads on a learner's two-way link).
func TestUnusableFramesEndTheLink(t *testing.T) {
	tests := []struct {
		name      string
		frame     []byte
		err       error
		acc, dial string
	}{
		{"bad magic", []byte("GET / HTTP/1.1\r\n\r\n"), peerlink.ErrFrameBadMagic, "frames_refused_bad_magic_total", "dials_ended_frame_bad_magic_total"},
		{"another version", append([]byte("PRFT\x06\x04"), 0, 0, 0, 1, 'x'), peerlink.ErrFrameUnreadable, "frames_refused_unreadable_total", "dials_ended_frame_unreadable_total"},
		{"a handshake frame", peerlink.AppendHeader(nil, peerlink.KindVerdict, 0), peerlink.ErrFrameUnreadable, "frames_refused_unreadable_total", "dials_ended_frame_unreadable_total"},
		{"over the cap", peerlink.AppendHeader(nil, peerlink.KindMessage, 1<<20+1), peerlink.ErrFrameOverCap, "frames_refused_over_cap_total", "dials_ended_frame_over_cap_total"},
		{"over the default cap", peerlink.AppendHeader(nil, peerlink.KindMessage, peerlink.DefaultMaxMessage+1), peerlink.ErrFrameOverCap, "frames_refused_over_cap_total", "dials_ended_frame_over_cap_total"},
	}
	capped := func(c *Config) { c.Member.MaxMessage = 1 << 20 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTapped(t, capped)
			got := readAsync(l.r.accepted)
			go l.dialRaw.Conn.Write(tt.frame)
			if r := await(t, got); !errors.Is(r.err, tt.err) {
				t.Fatalf("acceptor: %v", r.err)
			}
			if !cmp.Equal(l.acc.counts(), one(tt.acc)) || !cmp.Equal(l.dial.counts(), map[string]uint64{}) {
				t.Fatalf("acceptor's read: counted %v / %v", l.acc.counts(), l.dial.counts())
			}
			l = newTapped(t, capped)
			got = readAsync(l.r.dialled)
			go l.accRaw.Conn.Write(tt.frame)
			if r := await(t, got); !errors.Is(r.err, tt.err) {
				t.Fatalf("dialler: %v", r.err)
			}
			if !cmp.Equal(l.acc.counts(), map[string]uint64{}) || !cmp.Equal(l.dial.counts(), one(tt.dial)) {
				t.Fatalf("dialler's read: counted %v / %v", l.acc.counts(), l.dial.counts())
			}
		})
	}
}

// A frame changed in flight, replayed, spliced in from another link or
// reflected to its sender fails its tag and ends the link, counted on the
// end that read it.
func TestOutOfPlaceFramesOnTheWire(t *testing.T) {
	tests := []struct {
		name    string
		deliver func(t *testing.T, l, other tapped) (reader *Conn, counts func() map[string]uint64)
		counter string
	}{
		{"changed in flight", func(t *testing.T, l, _ tapped) (*Conn, func() map[string]uint64) {
			l.dialRaw.arm()
			go l.r.dialled.WriteMessage([]byte("MsgVote"))
			return l.r.accepted, l.acc.counts
		}, "frames_refused_tag_total"},
		{"changed in flight towards a learner", func(t *testing.T, l, _ tapped) (*Conn, func() map[string]uint64) {
			l.accRaw.arm()
			go l.r.accepted.WriteMessage([]byte("MsgApp"))
			return l.r.dialled, l.dial.counts
		}, "dials_ended_frame_tag_total"},
		{"replayed", func(t *testing.T, l, _ tapped) (*Conn, func() map[string]uint64) {
			f := l.sent(t, l.r.dialled, l.dialRaw, l.r.accepted, []byte("MsgApp"))
			go l.dialRaw.Conn.Write(f)
			return l.r.accepted, l.acc.counts
		}, "frames_refused_tag_total"},
		{"spliced from another link", func(t *testing.T, l, other tapped) (*Conn, func() map[string]uint64) {
			f := other.sent(t, other.r.dialled, other.dialRaw, other.r.accepted, []byte("MsgApp"))
			go l.dialRaw.Conn.Write(f)
			return l.r.accepted, l.acc.counts
		}, "frames_refused_tag_total"},
		{"reflected to its sender", func(t *testing.T, l, _ tapped) (*Conn, func() map[string]uint64) {
			f := l.sent(t, l.r.dialled, l.dialRaw, l.r.accepted, []byte("MsgApp"))
			go l.accRaw.Conn.Write(f)
			return l.r.dialled, l.dial.counts
		}, "dials_ended_frame_tag_total"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, other := newTapped(t), newTapped(t)
			reader, counts := tt.deliver(t, l, other)
			if r := await(t, readAsync(reader)); !errors.Is(r.err, peerlink.ErrFrameTag) {
				t.Fatalf("%v", r.err)
			}
			if got := counts(); !cmp.Equal(got, one(tt.counter)) {
				t.Fatalf("counted %v", got)
			}
		})
	}
}

// pace-consensus §7.3.5: a message naming a sender other than the proven
// member closes the link, counted on the end that read it.
func TestWrongSenderEndsTheLink(t *testing.T) {
	notFromPeer := func(c *Config) {
		c.Member.CheckSender = func(peer string, msg []byte) error {
			if string(msg) != "from "+peer {
				return errors.New("the message names another sender")
			}
			return nil
		}
	}
	l := newTapped(t, notFromPeer)
	l.sent(t, l.r.dialled, l.dialRaw, l.r.accepted, []byte("from l1"))
	got := readAsync(l.r.accepted)
	go l.r.dialled.WriteMessage([]byte("from v2"))
	if r := await(t, got); !errors.Is(r.err, peerlink.ErrFrameSender) {
		t.Fatalf("acceptor: %v", r.err)
	}
	if !cmp.Equal(l.acc.counts(), one("frames_refused_sender_total")) {
		t.Fatalf("counted %v", l.acc.counts())
	}

	l = newTapped(t, notFromPeer)
	got = readAsync(l.r.dialled)
	go l.r.accepted.WriteMessage([]byte("from v3"))
	if r := await(t, got); !errors.Is(r.err, peerlink.ErrFrameSender) {
		t.Fatalf("dialler: %v", r.err)
	}
	if !cmp.Equal(l.dial.counts(), one("dials_ended_frame_sender_total")) {
		t.Fatalf("counted %v", l.dial.counts())
	}
}
