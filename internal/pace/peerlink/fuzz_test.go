package peerlink

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz seed corpora from the fixture")

// fixture is a deterministic handshake: the same frames on every run, so
// the seeds can hold the genuine ones.
type fixture struct {
	acceptor *AcceptHandshake
	dialler  *DialHandshake
	genuine  run
}

func newFixture(t testing.TB) *fixture {
	r := newRoster()
	genuine := exchange(t, member("v1", v1Key, r, 1), member("l1", l1Key, r, 2), "v1", LearnerToVoter)
	ah, err := member("v1", v1Key, r, 1).Accept()
	if err != nil {
		t.Fatal(err)
	}
	dh, err := member("l1", l1Key, r, 2).Dial("v1", LearnerToVoter)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{acceptor: ah, dialler: dh, genuine: genuine}
}

// FuzzDiallerReadsChallenge: whatever arrives as a challenge, the dialler
// never panics, and a link results only from the acceptor's own challenge.
func FuzzDiallerReadsChallenge(f *testing.F) {
	f.Fuzz(func(t *testing.T, frame []byte) {
		fx := newFixture(t)
		proof, err := fx.dialler.Prove(frame)
		if err != nil {
			return
		}
		j, err := fx.acceptor.Judge(proof)
		if err == nil && !bytes.Equal(frame, fx.genuine.challenge) {
			t.Fatalf("accepted a proof answering a challenge the acceptor did not send: %x", frame)
		}
		if j.Verdict != nil && !bytes.Equal(frame, fx.genuine.challenge) {
			t.Fatalf("signed a verdict for a proof of another challenge: %x", frame)
		}
	})
}

// FuzzAcceptorJudgesProof: whatever arrives as a proof, the acceptor never
// panics and signs a verdict only for the dialler's own proof.
func FuzzAcceptorJudgesProof(f *testing.F) {
	f.Fuzz(func(t *testing.T, frame []byte) {
		fx := newFixture(t)
		j, err := fx.acceptor.Judge(frame)
		if j.Verdict != nil && !bytes.Equal(frame, fx.genuine.proof) {
			t.Fatalf("a verdict (%v) for a proof the dialler did not send: %x", err, frame)
		}
		if err == nil && (j.Session == nil || j.Session.Peer().ID != "l1") {
			t.Fatalf("accepted without a session for l1: %x", frame)
		}
	})
}

// FuzzDiallerChecksVerdict: whatever arrives as a verdict, the dialler
// never panics and proceeds only on the acceptor's own.
func FuzzDiallerChecksVerdict(f *testing.F) {
	f.Fuzz(func(t *testing.T, frame []byte) {
		fx := newFixture(t)
		if _, err := fx.dialler.Prove(fx.genuine.challenge); err != nil {
			t.Fatal(err)
		}
		s, err := fx.dialler.Check(frame)
		if err == nil && (!bytes.Equal(frame, fx.genuine.verdict) || s.Peer().ID != "v1") {
			t.Fatalf("proceeded on a verdict the acceptor did not send: %x", frame)
		}
	})
}

// FuzzReceiveFrame: whatever arrives first on a proven link, it is taken
// only if it is the dialler's first frame, byte for byte.
func FuzzReceiveFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, frame []byte) {
		l, _ := pairOf(t)
		genuine := send(t, l.dialler, []byte("first"))
		msg, err := receive(l.acceptor, frame)
		if err == nil && (!bytes.Equal(frame, genuine) || string(msg) != "first") {
			t.Fatalf("took a frame the dialler did not send: %x", frame)
		}
	})
}

// FuzzParseHeader: any bytes are judged without panicking, and an accepted
// header never declares more than its kind's cap.
func FuzzParseHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, maxMessage uint32) {
		h, err := ParseHeader(b, maxMessage)
		if err != nil {
			return
		}
		limit := uint32(MaxHandshakePayload)
		if h.Kind == KindMessage {
			limit = messageCap(maxMessage)
		}
		if h.Len > limit || !bytes.HasPrefix(b, []byte(Magic)) {
			t.Fatalf("accepted %x as %+v", b, h)
		}
	})
}

// seedCorpora are the committed seeds: each genuine input and its damaged
// neighbours, so that every run reaches both the accepting and the refusing
// paths.
func seedCorpora(t testing.TB) map[string]map[string]string {
	fx := newFixture(t)
	l, _ := pairOf(t)
	first := send(t, l.dialler, []byte("first"))
	hdr := func(b []byte, max uint32) string { return seedFile(b) + fmt.Sprintf("uint32(%d)\n", max) }
	return map[string]map[string]string{
		"FuzzDiallerReadsChallenge": damaged(fx.genuine.challenge),
		"FuzzAcceptorJudgesProof":   damaged(fx.genuine.proof),
		"FuzzDiallerChecksVerdict":  damaged(fx.genuine.verdict),
		"FuzzReceiveFrame":          damaged(first),
		"FuzzParseHeader": {
			"message":      hdr(first[:HeaderLen], 0),
			"over-cap":     hdr(header(Magic, Version, 4, 1<<30), 0),
			"set-cap":      hdr(header(Magic, Version, 4, 100), 99),
			"old-version":  hdr(header(Magic, 4, 1, 64), 0),
			"bad-magic":    hdr([]byte("GET / HTTP/1.1"), 0),
			"short":        hdr([]byte(Magic), 0),
			"unknown-kind": hdr(header(Magic, Version, 7, 0), 0),
		},
	}
}

func damaged(genuine []byte) map[string]string {
	flipped := func(i int) []byte {
		c := bytes.Clone(genuine)
		c[i] ^= 0x01
		return c
	}
	return map[string]string{
		"genuine":        seedFile(genuine),
		"flipped-first":  seedFile(flipped(0)),
		"flipped-middle": seedFile(flipped(len(genuine) / 2)),
		"flipped-last":   seedFile(flipped(len(genuine) - 1)),
		"truncated":      seedFile(genuine[:len(genuine)-1]),
		"empty":          seedFile(nil),
	}
}

// seedFile is a corpus file whose first argument is b; a caller appends
// any further arguments' lines.
func seedFile(b []byte) string {
	return "go test fuzz v1\n" + fmt.Sprintf("[]byte(%s)\n", strconv.Quote(string(b)))
}

// The committed seeds are the fixture's: a change to the exchange that
// leaves them stale (so no seed reaches the accepting path) fails here.
// Rewrite them with: go test -run TestFuzzSeedsAreCurrent -update-seeds
func TestFuzzSeedsAreCurrent(t *testing.T) {
	for target, seeds := range seedCorpora(t) {
		for name, want := range seeds {
			path := filepath.Join("testdata", "fuzz", target, name)
			if *updateSeeds {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				t.Errorf("%s is stale or missing (%v); rerun with -update-seeds", path, err)
			}
		}
	}
	// The genuine seeds reach the accepting path.
	if fx := newFixture(t); fx.genuine.acceptErr != nil || fx.genuine.dialErr != nil {
		t.Errorf("the fixture's own handshake fails: %v, %v", fx.genuine.acceptErr, fx.genuine.dialErr)
	}
}
