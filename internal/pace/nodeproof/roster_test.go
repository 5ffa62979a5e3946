package nodeproof

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// pace-node §8.3, pace-node §10.6: each roster refusal answers its own code and
// is counted apart; a revoked key also marks the connection.
func TestRosterRefusalsAreAnsweredAndCountedApart(t *testing.T) {
	tests := []struct {
		name    string
		id      string
		key     Signer
		roster  func() *leasetest.Roster
		want    error
		code    wire.Code
		counter string
		marked  bool
	}{
		{"roster not yet applied", "n2", nodeKey, newRosterWithoutVoters, ErrRosterNotApplied,
			wire.CodeRosterNotYetApplied, "pace_node_proofs_refused_roster_not_yet_applied_total", false},
		{"revoked key", "n3", revokedKey, newRoster, ErrKeyRevoked,
			wire.CodeNodeKeyRevoked, "pace_node_proofs_refused_revoked_key_total", true},
		{"forgotten member", "n2", nodeKey, func() *leasetest.Roster { return newRoster().Forget("n2") }, ErrKeyRevoked,
			wire.CodeNodeKeyRevoked, "pace_node_proofs_refused_revoked_key_total", true},
		{"stranger", "stranger", strangerKey, newRoster, ErrKeyUnknown,
			wire.CodeNodeKeyUnknown, "pace_node_proofs_refused_unknown_key_total", false},
		{"member id with another key", "n2", strangerKey, newRoster, ErrKeyUnknown,
			wire.CodeNodeKeyUnknown, "pace_node_proofs_refused_unknown_key_total", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			w.server.Roster = tt.roster()
			s := w.server.NewSession()
			c := &Client{ID: tt.id, Key: tt.key, Random: seededRandom(7)}
			h, answer := challenge(t, s, c)
			_, body := proofBody(t, h, answer)
			_, _, err := prove(t, s, body)
			r, ok := RefusalFor(err)
			if !errors.Is(err, tt.want) || !ok || r.Code != tt.code {
				t.Fatalf("got %v (code %v), want %v", err, r.Code, tt.want)
			}
			if got := counts(w.counters); !cmp.Equal(got, map[string]uint64{tt.counter: 1}) {
				t.Fatalf("counters %v", got)
			}
			if s.PresentedRevokedKey() != tt.marked {
				t.Fatalf("connection marked revoked = %v", !tt.marked)
			}
		})
	}
}

// A node without consensus answers both verbs no-cluster and counts
// nothing: it is this node's state, not the prover's fault.
func TestNoClusterAnswersNoCluster(t *testing.T) {
	w := newWorld()
	w.server.Roster = nil
	s := w.server.NewSession()
	h, err := w.client("n2", nodeKey).Begin()
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Challenge(fieldsOf(t, h.Request().Append(nil), 2))
	if r, _ := RefusalFor(err); r.Code != wire.CodeNoCluster {
		t.Fatalf("NODE-CHALLENGE: %v", err)
	}
	_, _, err = s.Prove([][]byte{[]byte("n2"), make([]byte, 32), make([]byte, 64)})
	if r, _ := RefusalFor(err); r.Code != wire.CodeNoCluster {
		t.Fatalf("PROVE-NODE: %v", err)
	}
	if got := counts(w.counters); len(got) != 0 {
		t.Fatalf("counters %v", got)
	}
}

func TestMalformedBodiesAreCounted(t *testing.T) {
	w := newWorld()
	s := w.server.NewSession()
	for _, fields := range [][][]byte{
		{make([]byte, 31), make([]byte, 32)},
		{make([]byte, 32), make([]byte, 33)},
		{make([]byte, 32)},
	} {
		if _, err := s.Challenge(fields); !errors.Is(err, ErrMalformed) {
			t.Fatalf("NODE-CHALLENGE %d/%d bytes: %v", len(fields[0]), len(fields[len(fields)-1]), err)
		}
	}
	challenge(t, s, w.client("n2", nodeKey))
	if _, _, err := s.Prove([][]byte{nil, make([]byte, 32), make([]byte, 64)}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("PROVE-NODE without an id: %v", err)
	}
	if r, _ := RefusalFor(ErrMalformed); r.Code != wire.CodeMalformedFrame {
		t.Fatalf("malformed answers %v", r.Code)
	}
	if got := counts(w.counters); !cmp.Equal(got, map[string]uint64{"pace_node_proofs_malformed_total": 4}) {
		t.Fatalf("counters %v", got)
	}
}

// The client checks, once it holds a roster, that the scheduler is a live
// voter and refuses a revoked one itself.
func TestClientChecksTheSchedulerAgainstItsRoster(t *testing.T) {
	tests := []struct {
		name   string
		roster *leasetest.Roster // the client's
		want   error
	}{
		{"no roster yet: the signature suffices", nil, nil},
		{"roster without voters: the signature suffices", newRosterWithoutVoters(), nil},
		{"live voter", newRoster(), nil},
		{"revoked scheduler", newRoster().Revoke(schedulerKey.Public()), ErrServerRevoked},
		{"forgotten scheduler", newRoster().AddVoter("s9", strangerKey.Public()).Forget("s1"), ErrServerRevoked},
		{"scheduler is only a learner", newRosterWithoutVoters().AddVoter("s9", strangerKey.Public()).AddLearner("s1", schedulerKey.Public()), ErrServerNotVoter},
		{"id records another key", newRosterWithoutVoters().AddVoter("s1", strangerKey.Public()), ErrServerNotVoter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld()
			c := &Client{ID: "n2", Key: nodeKey, Random: seededRandom(8)}
			if tt.roster != nil {
				c.Roster = tt.roster
			}
			h, answer := challenge(t, w.server.NewSession(), c)
			if _, err := h.Prove(answer); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestClientHandshakeProvesOnce(t *testing.T) {
	w := newWorld()
	h, answer := challenge(t, w.server.NewSession(), w.client("n2", nodeKey))
	if _, err := h.Prove(answer); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Prove(answer); !errors.Is(err, ErrHandshakeSpent) {
		t.Fatalf("second Prove: %v", err)
	}
}

// The source of randomness is the injected one, and its failure is
// reported rather than papered over.
func TestRandomSourceFailure(t *testing.T) {
	c := &Client{ID: "n2", Key: nodeKey, Random: failingReader{}}
	if _, err := c.Begin(); !errors.Is(err, ErrNoRandom) {
		t.Fatalf("client: %v", err)
	}
	w := newWorld()
	w.server.Random = failingReader{}
	h, err := w.client("n2", nodeKey).Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.server.NewSession().Challenge(fieldsOf(t, h.Request().Append(nil), 2)); !errors.Is(err, ErrNoRandom) {
		t.Fatalf("server: %v", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }
