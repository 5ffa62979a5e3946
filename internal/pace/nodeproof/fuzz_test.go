package nodeproof

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz seed corpora from the fixture")

// fuzzFixture is a deterministic exchange: the same challenge, proof and
// first sealed frame on every run, so the seeds can hold the genuine ones.
type fuzzFixture struct {
	w         *world
	session   *Session
	handshake *ClientHandshake
	answer    []byte // NODE-CHALLENGE Ok payload
}

func newFuzzFixture(t testing.TB) *fuzzFixture {
	w := newWorld()
	s := w.server.NewSession()
	h, answer := challenge(t, s, w.client("n2", nodeKey))
	return &fuzzFixture{w: w, session: s, handshake: h, answer: answer}
}

// genuineProof is the proof the fixture's client sends (computed on a
// twin fixture, since a handshake proves once).
func genuineProof(t testing.TB) []byte {
	fx := newFuzzFixture(t)
	_, body := proofBody(t, fx.handshake, fx.answer)
	return body
}

// FuzzClientChecksChallengeReply: whatever answers NODE-CHALLENGE, the
// client never panics and accepts nothing but the scheduler's own reply.
func FuzzClientChecksChallengeReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, answer []byte) {
		fx := newFuzzFixture(t)
		_, err := fx.handshake.Prove(answer)
		if err == nil && !bytes.Equal(answer, fx.answer) {
			t.Fatalf("accepted a reply the scheduler did not send: %x", answer)
		}
	})
}

// FuzzServerChecksProof: whatever body PROVE-NODE carries, the server
// never panics and proves nothing but the genuine proof of its challenge.
func FuzzServerChecksProof(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		fx := newFuzzFixture(t)
		fields, err := wire.SplitFields(nil, body, verbs.ProveNodeArity)
		if err != nil {
			return // the frame server answers a broken field list itself
		}
		_, peer, err := fx.session.Prove(fields)
		if err == nil && (!bytes.Equal(body, genuineProof(t)) || peer.ID != "n2") {
			t.Fatalf("proved %q from a body the node did not send: %x", peer.ID, body)
		}
	})
}

// FuzzServerAnswersChallenge: whatever NODE-CHALLENGE carries, the server
// never panics and answers only a well-formed challenge, with a reply the
// client grammar reads and whose signature is the scheduler's.
func FuzzServerAnswersChallenge(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		w := newWorld()
		fields, err := wire.SplitFields(nil, body, verbs.NodeChallengeArity)
		if err != nil {
			return
		}
		answer, err := w.server.NewSession().Challenge(fields)
		if err != nil {
			return
		}
		req, perr := verbs.ParseNodeChallenge(fields)
		ok, aerr := verbs.ParseNodeChallengeOk(answer)
		if perr != nil || aerr != nil {
			t.Fatalf("answered a body it cannot parse (%v) or with one the client cannot (%v)", perr, aerr)
		}
		x := exchange{challenge: req, answer: ok}
		if err := (&Client{}).checkServer(Peer{ID: ok.ServerID, Key: ok.ServerKey[:]}, ok.Signature[:], x.challengeFields()); err != nil {
			t.Fatalf("reply does not verify: %v", err)
		}
	})
}

// FuzzCheckTag: whatever frame arrives first on a sealed connection, it
// verifies only if its bytes and tag are the client's first frame.
func FuzzCheckTag(f *testing.F) {
	f.Fuzz(func(t *testing.T, header, payload, tag []byte) {
		w := newWorld()
		p := handshake(t, w, w.client("n2", nodeKey))
		genuine := seal(p.client, wire.OpFetch, []byte("first"))
		err := p.server.CheckTag(tag, header, payload)
		sent := append(bytes.Clone(genuine.header), genuine.payload...)
		if err == nil && (!bytes.Equal(append(bytes.Clone(header), payload...), sent) || !bytes.Equal(tag, genuine.tag)) {
			t.Fatalf("accepted a frame the client did not send: %x %x %x", header, payload, tag)
		}
	})
}

// seedCorpora are the committed seeds: the genuine input and its damaged
// neighbours, so every run exercises both the accepting and the refusing
// paths.
func seedCorpora(t testing.TB) map[string]map[string][][]byte {
	fx := newFuzzFixture(t)
	proof := genuineProof(t)
	w := newWorld()
	p := handshake(t, w, w.client("n2", nodeKey))
	fr := seal(p.client, wire.OpFetch, []byte("first"))
	req := fx.handshake.Request().Append(nil)
	return map[string]map[string][][]byte{
		"FuzzClientChecksChallengeReply": damaged(fx.answer),
		"FuzzServerChecksProof":          damaged(proof),
		"FuzzServerAnswersChallenge":     damaged(req),
		"FuzzCheckTag": {
			"genuine":        {fr.header, fr.payload, fr.tag},
			"flipped-tag":    {fr.header, fr.payload, flipped(fr.tag, 0)},
			"moved-boundary": {append(bytes.Clone(fr.header), fr.payload[0]), fr.payload[1:], fr.tag},
			"empty":          {nil, nil, nil},
		},
	}
}

func damaged(genuine []byte) map[string][][]byte {
	return map[string][][]byte{
		"genuine":        {genuine},
		"flipped-first":  {flipped(genuine, 0)},
		"flipped-middle": {flipped(genuine, len(genuine)/2)},
		"flipped-last":   {flipped(genuine, len(genuine)-1)},
		"truncated":      {genuine[:len(genuine)-1]},
		"empty":          {nil},
	}
}

func flipped(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}

func seedFile(args [][]byte) string {
	var sb strings.Builder
	sb.WriteString("go test fuzz v1\n")
	for _, a := range args {
		fmt.Fprintf(&sb, "[]byte(%s)\n", strconv.Quote(string(a)))
	}
	return sb.String()
}

// The committed seeds are the fixture's: a change to the exchange that
// leaves them stale (so no seed reaches the accepting path) fails here.
// Rewrite them with: go test -run TestFuzzSeedsAreCurrent -update-seeds
func TestFuzzSeedsAreCurrent(t *testing.T) {
	for target, seeds := range seedCorpora(t) {
		for name, args := range seeds {
			path := filepath.Join("testdata", "fuzz", target, name)
			want := seedFile(args)
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
}
