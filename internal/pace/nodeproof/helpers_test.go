package nodeproof

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Test world: scheduler "s1" is the cluster's voter; node "n2" is a
// learner dialling it; "n3" is a member the cluster revoked; a stranger
// holds a key no roster records.
const testCluster = "c1"

var (
	schedulerKey = leasetest.NewSigner("s1")
	nodeKey      = leasetest.NewSigner("n2")
	revokedKey   = leasetest.NewSigner("n3")
	strangerKey  = leasetest.NewSigner("stranger")
)

// seededRandom is a deterministic random source for one test.
func seededRandom(seed uint64) io.Reader {
	var s [32]byte
	binary.BigEndian.PutUint64(s[:], seed)
	return rand.NewChaCha8(s)
}

func newRoster() *leasetest.Roster {
	return leasetest.NewRoster(testCluster).
		AddVoter("s1", schedulerKey.Public()).
		AddLearner("n2", nodeKey.Public()).
		AddLearner("n3", revokedKey.Public()).
		Revoke(revokedKey.Public())
}

// world is one scheduler and the nodes that may dial it.
type world struct {
	roster   *leasetest.Roster
	counters *Counters
	server   *Server
}

func newWorld() *world {
	w := &world{roster: newRoster(), counters: &Counters{}}
	w.server = &Server{ID: "s1", Key: schedulerKey, Roster: w.roster, Random: seededRandom(1), Counters: w.counters}
	return w
}

// client is node id dialling with key; its roster is the scheduler's.
func (w *world) client(id string, key Signer) *Client {
	return &Client{ID: id, Key: key, Roster: w.roster, Random: seededRandom(2)}
}

// fieldsOf splits a request body as the frame server would.
func fieldsOf(t testing.TB, body []byte, arity int) [][]byte {
	t.Helper()
	fields, err := wire.SplitFields(nil, body, arity)
	if err != nil {
		t.Fatalf("split: %v", err)
	}
	return fields
}

// challenge runs NODE-CHALLENGE: the client's handshake and the server's
// Ok payload.
func challenge(t testing.TB, s *Session, c *Client) (*ClientHandshake, []byte) {
	t.Helper()
	h, err := c.Begin()
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	answer, err := s.Challenge(fieldsOf(t, h.Request().Append(nil), verbs.NodeChallengeArity))
	if err != nil {
		t.Fatalf("Challenge: %v", err)
	}
	return h, answer
}

// proofBody runs the client's half of PROVE-NODE.
func proofBody(t testing.TB, h *ClientHandshake, answer []byte) (ClientProof, []byte) {
	t.Helper()
	proof, err := h.Prove(answer)
	if err != nil {
		t.Fatalf("client Prove: %v", err)
	}
	return proof, proof.Request.Append(nil)
}

// prove runs PROVE-NODE's server half on a body.
func prove(t testing.TB, s *Session, body []byte) (*Sealer, Peer, error) {
	t.Helper()
	return s.Prove(fieldsOf(t, body, verbs.ProveNodeArity))
}

// pair is both ends of an accepted proof.
type pair struct {
	session        *Session
	client, server *Sealer
	peer           Peer
	proof          ClientProof
}

// handshake runs a whole accepted proof for c on a new session.
func handshake(t testing.TB, w *world, c *Client) pair {
	t.Helper()
	s := w.server.NewSession()
	h, answer := challenge(t, s, c)
	proof, body := proofBody(t, h, answer)
	sealer, peer, err := prove(t, s, body)
	if err != nil {
		t.Fatalf("server Prove: %v", err)
	}
	return pair{session: s, client: proof.Sealer, server: sealer, peer: peer, proof: proof}
}

// frame is a request frame as a sealed connection carries it.
type frame struct{ header, payload, tag []byte }

// seal builds a request frame for op and tags it with s.
func seal(s *Sealer, op wire.Op, fields ...[]byte) frame {
	raw := wire.AppendRequest(nil, op, fields...)
	f := frame{header: raw[:wire.RequestHeaderLen], payload: raw[wire.RequestHeaderLen:]}
	f.tag = s.AppendTag(nil, f.header, f.payload)
	return f
}

// open checks f as the next frame s receives.
func open(s *Sealer, f frame) error { return s.CheckTag(f.tag, f.header, f.payload) }

func counts(c *Counters) map[string]uint64 {
	m := map[string]uint64{}
	for _, metric := range c.Metrics() {
		if v := metric.Value.Load(); v != 0 {
			m[metric.Name] = v
		}
	}
	return m
}

// newRosterWithoutVoters is a roster consensus has not filled yet.
func newRosterWithoutVoters() *leasetest.Roster { return leasetest.NewRoster(testCluster) }
