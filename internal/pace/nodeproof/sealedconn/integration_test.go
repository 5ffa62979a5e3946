package sealedconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// pace-node §8.3 end to end over TCP with the real frame server: the node
// proves, then every request and reply is sealed, small and large alike.
func TestProvenConnectionCarriesSealedRequestsAndReplies(t *testing.T) {
	s := startScheduler(t)
	c := dial(t, s.addr, s.config("n2", nodeKey))
	if got := c.Server(); got.ID != "s1" || !bytes.Equal(got.Key, schedulerKey.Public()) {
		t.Fatalf("proved scheduler %q", got.ID)
	}
	ctx := testContext(t)
	for i := range 20 {
		beat := []byte("heartbeat " + strconv.Itoa(i))
		status, payload, err := c.Do(ctx, wire.OpHeartbeat, []byte("n2"), beat, nil)
		if err != nil || status != wire.StatusOk || !bytes.Equal(payload, beat) {
			t.Fatalf("HEARTBEAT %d: %v %s %q", i, err, status, payload)
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: the server's large-reply path
	if _, payload, err := c.Do(ctx, wire.OpFetch, big); err != nil || !bytes.Equal(payload, big) {
		t.Fatalf("large sealed echo: %v (%d bytes)", err, len(payload))
	}
	// A refusal is sealed too and leaves the connection usable.
	if _, _, err := c.Do(ctx, wire.OpCompile, make([][]byte, 10)...); !isRefusal(err, wire.CodeUnknownOpcode) {
		t.Fatalf("sealed refusal: %v", err)
	}
	if _, payload, err := c.Do(ctx, wire.OpFetch, []byte("after")); err != nil || string(payload) != "after" {
		t.Fatalf("after a refusal: %v %q", err, payload)
	}
	if got := s.count("pace_node_proofs_accepted_total"); got != 1 {
		t.Fatalf("accepted %d", got)
	}
}

// REGISTER-like verbs on an unproven connection are refused
// node-identity-required, loopback included.
func TestUnprovenConnectionIsRefusedNodeIdentityRequired(t *testing.T) {
	s := startScheduler(t)
	raw, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write(wire.AppendRequest(nil, wire.OpHeartbeat, []byte("n2"), []byte("beat"), nil)); err != nil {
		t.Fatal(err)
	}
	_, _, err = wire.ReadReply(raw, wire.OpHeartbeat, 0, nil)
	if !isRefusal(err, wire.CodeNodeIdentityRequired) {
		t.Fatalf("unproven HEARTBEAT: %v", err)
	}
}

// A refused proof reaches the dialler as the scheduler's refusal, and
// each is counted apart.
func TestRefusedProofsReachTheDialler(t *testing.T) {
	s := startScheduler(t)
	for _, tt := range []struct {
		id      string
		key     nodeproof.Signer
		code    wire.Code
		counter string
	}{
		{"stranger", strangerKey, wire.CodeNodeKeyUnknown, "pace_node_proofs_refused_unknown_key_total"},
		{"n3", revokedKey, wire.CodeNodeKeyRevoked, "pace_node_proofs_refused_revoked_key_total"},
	} {
		_, err := Dial(testContext(t), s.addr, s.config(tt.id, tt.key))
		if !isRefusal(err, tt.code) {
			t.Fatalf("%s: %v", tt.id, err)
		}
		if got := s.count(tt.counter); got != 1 {
			t.Fatalf("%s: %s = %d", tt.id, tt.counter, got)
		}
	}
}

// The dialling node refuses a scheduler its roster has revoked, before it
// sends any proof.
func TestDiallerRefusesARevokedScheduler(t *testing.T) {
	s := startScheduler(t)
	cfg := s.config("n2", nodeKey)
	s.roster.Revoke(schedulerKey.Public())
	if _, err := Dial(testContext(t), s.addr, cfg); !errors.Is(err, nodeproof.ErrServerRevoked) {
		t.Fatalf("revoked scheduler: %v", err)
	}
	if got := s.count("pace_node_proofs_unchallenged_total") + s.count("pace_node_proofs_accepted_total"); got != 0 {
		t.Fatalf("a proof reached the scheduler: %d", got)
	}
}

// pace-consensus §7.6: a forget reaches open proven connections at their next
// message.
func TestRevocationStopsAProvenConnectionAtItsNextRequest(t *testing.T) {
	s := startScheduler(t)
	c := dial(t, s.addr, s.config("n2", nodeKey))
	ctx := testContext(t)
	if _, _, err := c.Do(ctx, wire.OpHeartbeat, []byte("n2"), []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	s.roster.Forget("n2")
	if _, _, err := c.Do(ctx, wire.OpHeartbeat, []byte("n2"), []byte("2"), nil); !isRefusal(err, wire.CodeNodeKeyRevoked) {
		t.Fatalf("after forget: %v", err)
	}
}

// A man in the middle flipping one byte of a sealed request: the server
// closes without a reply and counts the frame.
func TestTamperedSealedRequestClosesTheConnectionUnanswered(t *testing.T) {
	s := startScheduler(t)
	m := startMITM(t, s.addr)
	c := dial(t, m.addr, s.config("n2", nodeKey))
	m.up.flipNext(wire.RequestHeaderLen + 6) // inside the payload
	_, _, err := c.Do(testContext(t), wire.OpFetch, []byte("sealed"))
	if !closedUnanswered(err) {
		t.Fatalf("tampered request: %v", err)
	}
	if r := s.closes.next(t); r != frameserver.ClosedBadTag {
		t.Fatalf("server closed for %s", r)
	}
	if got := s.count("pace_node_sealed_frames_refused_total"); got != 1 {
		t.Fatalf("sealed frames refused %d", got)
	}
	if _, _, err := c.Do(testContext(t), wire.OpFetch, []byte("again")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after the failure: %v", err)
	}
}

// A sealed request replayed by a man in the middle fails its tag: the
// server answers the original, then closes on the copy.
func TestReplayedSealedRequestClosesTheConnection(t *testing.T) {
	s := startScheduler(t)
	m := startMITM(t, s.addr)
	c := dial(t, m.addr, s.config("n2", nodeKey))
	fields := [][]byte{[]byte("n2"), []byte("beat"), nil}
	frameLen := len(wire.AppendRequest(nil, wire.OpHeartbeat, fields...)) + nodeproof.TagLen
	m.up.duplicateNext(frameLen)
	if _, payload, err := c.Do(testContext(t), wire.OpHeartbeat, fields...); err != nil || string(payload) != "beat" {
		t.Fatalf("original: %v %q", err, payload)
	}
	if r := s.closes.next(t); r != frameserver.ClosedBadTag {
		t.Fatalf("server closed for %s", r)
	}
	if got := s.count("pace_node_sealed_frames_refused_total"); got != 1 {
		t.Fatalf("sealed frames refused %d", got)
	}
}

// A man in the middle flipping one byte of a sealed reply: the client
// refuses it, counts it and ends the connection.
func TestTamperedSealedReplyIsRefusedByTheClient(t *testing.T) {
	s := startScheduler(t)
	m := startMITM(t, s.addr)
	cfg := s.config("n2", nodeKey)
	cfg.Counters = &nodeproof.Counters{}
	c := dial(t, m.addr, cfg)
	m.down.flipNext(wire.ReplyHeaderLen + 1)
	if _, _, err := c.Do(testContext(t), wire.OpFetch, []byte("sealed reply")); !errors.Is(err, nodeproof.ErrBadTag) {
		t.Fatalf("tampered reply: %v", err)
	}
	if got := cfg.Counters.SealedFramesRefused.Load(); got != 1 {
		t.Fatalf("client counted %d", got)
	}
	if _, _, err := c.Do(testContext(t), wire.OpFetch, []byte("again")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after the failure: %v", err)
	}
}

func isRefusal(err error, code wire.Code) bool {
	var r wire.Refusal
	return errors.As(err, &r) && r.Code == code
}

// closedUnanswered: the connection ended with no reply at all.
func closedUnanswered(err error) bool {
	var r wire.Refusal
	return err != nil && !errors.As(err, &r) &&
		(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET))
}
