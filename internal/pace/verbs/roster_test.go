package verbs

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// member builds one roster member entry from its five fields.
func member(id, seat, raft, node, key []byte) []byte { return rec(id, seat, raft, node, key) }

var goodMember = member([]byte("n1"), []byte{1}, []byte("10.0.0.1:6680"), []byte("10.0.0.1:6674"), fill(32, 5))

func roster(cluster []byte, members ...[]byte) func() error {
	payload := rec(cluster, list(members...))
	return func() error { _, err := ParseRoster(payload); return err }
}

func TestParseRosterRefusals(t *testing.T) {
	mf, tl, c1 := wire.CodeMalformedFrame, true, []byte("c1")
	many := repeat(MaxRosterMembers+1, goodMember)
	checkRefusals(t, []refusalCase{
		{"one field", func() error { _, err := ParseRoster(rec(c1)); return err }, "body", mf, false},
		{"three fields", func() error { _, err := ParseRoster(rec(c1, nil, nil)); return err }, "body", mf, false},
		{"empty cluster id", roster(nil, goodMember), "roster.clusterId", mf, false},
		{"cluster id 65 bytes", roster(text(65), goodMember), "roster.clusterId", mf, tl},
		{"members not a field list", func() error { _, err := ParseRoster(rec(c1, []byte{0, 0, 0, 9, 1})); return err },
			"roster.members", mf, false},
		{"too many members", roster(c1, many...), "roster.members", mf, tl},
		{"member of four fields", roster(c1, rec([]byte("n1"), []byte{1}, nil, nil)), "body", mf, false},
		{"member of six fields", roster(c1, rec([]byte("n1"), []byte{1}, nil, nil, fill(32, 5), nil)), "body", mf, false},
		{"empty member id", roster(c1, member(nil, []byte{1}, nil, nil, fill(32, 5))), "roster.id", mf, false},
		{"member id 65 bytes", roster(c1, member(text(65), []byte{1}, nil, nil, fill(32, 5))), "roster.id", mf, tl},
		{"seat 00", roster(c1, member([]byte("n1"), []byte{0}, nil, nil, fill(32, 5))), "roster.seat", mf, false},
		{"seat 03", roster(c1, member([]byte("n1"), []byte{3}, nil, nil, fill(32, 5))), "roster.seat", mf, false},
		{"seat empty", roster(c1, member([]byte("n1"), nil, nil, nil, fill(32, 5))), "roster.seat", mf, false},
		{"raft endpoint 261 bytes", roster(c1, member([]byte("n1"), []byte{2}, text(261), nil, fill(32, 5))), "roster.raft", mf, tl},
		{"node endpoint not UTF-8", roster(c1, member([]byte("n1"), []byte{2}, nil, notUTF8, fill(32, 5))), "roster.node", mf, false},
		{"key 31 bytes", roster(c1, member([]byte("n1"), []byte{1}, nil, nil, fill(31, 5))), "roster.key", mf, false},
		{"key empty", roster(c1, goodMember, member([]byte("n2"), []byte{1}, nil, nil, nil)), "roster.key", mf, false},
	})
}

// TestRosterAtBoundsFitsTheReply: a roster of the most members, every text at its bound, is
// read, and an approval carrying it fits the reply ceiling of ENROLL.
func TestRosterAtBoundsFitsTheReply(t *testing.T) {
	m := RosterMember{ID: string(text(MaxID)), Seat: 2, RaftEndpoint: string(text(MaxEndpoint)),
		NodeEndpoint: string(text(MaxEndpoint)), Key: fill(32, 1)}
	r := Roster{ClusterID: string(text(MaxID)), Members: make([]RosterMember, MaxRosterMembers)}
	for i := range r.Members {
		r.Members[i] = m
		r.Members[i].ID = fmt.Sprintf("%04d", i) + m.ID[4:] // ids are unique in a roster
	}
	record := AppendRoster(nil, r)
	got, err := ParseRoster(record)
	if err != nil || len(got.Members) != MaxRosterMembers {
		t.Fatalf("a roster at every bound: %d members, %v", len(got.Members), err)
	}
	a := EnrollAnswer{Outcome: EnrollApproved, Roster: record, Key: fill(32, 2), Signature: fill(64, 3)}
	if info, _ := wire.Lookup(wire.OpEnroll); uint32(len(a.Append(nil))) > info.ReplyCeiling {
		t.Fatalf("an approval of %d bytes exceeds ENROLL's reply ceiling %d", len(a.Append(nil)), info.ReplyCeiling)
	}
}

func TestRosterMember(t *testing.T) {
	r := Roster{ClusterID: "c1", Members: []RosterMember{{ID: "n1", Seat: 1}, {ID: "n2", Seat: 2}}}
	if m, ok := r.Member("n2"); !ok || m.Seat != 2 {
		t.Fatalf("Member(n2) = %+v, %v", m, ok)
	}
	if _, ok := r.Member("n3"); ok {
		t.Fatal("found a member that is not there")
	}
}

func genRosterMember(t *rapid.T) RosterMember {
	return RosterMember{
		ID:           genText(1, MaxID).Draw(t, "id"),
		Seat:         rapid.Uint8Range(1, 2).Draw(t, "seat"),
		RaftEndpoint: genText(0, MaxEndpoint).Draw(t, "raft"),
		NodeEndpoint: genText(0, MaxEndpoint).Draw(t, "node"),
		Key:          rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "key"),
	}
}

func genRoster(t *rapid.T) Roster {
	return Roster{ClusterID: genText(1, MaxID).Draw(t, "cluster"),
		Members: rapid.SliceOfNDistinct(rapid.Custom(genRosterMember), 0, 8, func(m RosterMember) string { return m.ID }).Draw(t, "members")}
}

// TestRoundTripRoster: the roster comes back, and its encoding is the only one (a joiner's
// fingerprint of the bytes received is the leader's of the bytes sent).
func TestRoundTripRoster(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRoster(t)
		record := AppendRoster(nil, r)
		got, err := ParseRoster(record)
		checkRoundTrip(t, r, got, err)
		if !bytes.Equal(AppendRoster(nil, got), record) {
			t.Fatal("re-encoding differs from the record received")
		}
	})
}

var fingerprintForm = regexp.MustCompile(`^SHA256:[A-Za-z0-9+/]{43}$`)

func TestRosterFingerprintKnownAnswer(t *testing.T) {
	// The SHA-256 of nothing, as ssh-keygen would print it.
	if got, want := RosterFingerprint(nil), "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"; got != want {
		t.Fatalf("RosterFingerprint(nil) = %q, want %q", got, want)
	}
}

// TestRosterFingerprint: the printed form is `SHA256:` and 43 characters that decode to the
// record's SHA-256, and any change to a roster (cluster, a member's seat, key or endpoints, one
// member more or fewer) changes it.
func TestRosterFingerprint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRoster(t)
		record := AppendRoster(nil, r)
		fp := RosterFingerprint(record)
		if !fingerprintForm.MatchString(fp) {
			t.Fatalf("fingerprint %q is not SHA256: and 43 base64 characters", fp)
		}
		sum, err := base64.RawStdEncoding.DecodeString(fp[len("SHA256:"):])
		if want := sha256.Sum256(record); err != nil || !bytes.Equal(sum, want[:]) {
			t.Fatalf("fingerprint %q does not decode to the record's SHA-256 (%v)", fp, err)
		}
		other := mutateRoster(t, r)
		if RosterFingerprint(AppendRoster(nil, other)) == fp {
			t.Fatalf("two rosters share fingerprint %s:\n%+v\n%+v", fp, r, other)
		}
	})
}

// mutateRoster returns a copy of r that differs from it in one drawn way.
func mutateRoster(t *rapid.T, r Roster) Roster {
	out := Roster{ClusterID: r.ClusterID, Members: append([]RosterMember(nil), r.Members...)}
	kinds := []string{"cluster", "add"}
	if len(r.Members) > 0 {
		kinds = append(kinds, "drop", "seat", "key", "raft", "node")
	}
	i := 0
	if len(r.Members) > 0 {
		i = rapid.IntRange(0, len(r.Members)-1).Draw(t, "which")
	}
	switch rapid.SampledFrom(kinds).Draw(t, "mutation") {
	case "cluster":
		out.ClusterID += "x"
	case "add":
		out.Members = append(out.Members, genRosterMember(t))
	case "drop":
		out.Members = append(out.Members[:i], out.Members[i+1:]...)
	case "seat":
		out.Members[i].Seat = 3 - out.Members[i].Seat
	case "key":
		out.Members[i].Key = append([]byte(nil), out.Members[i].Key...)
		out.Members[i].Key[rapid.IntRange(0, 31).Draw(t, "byte")] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
	case "raft":
		out.Members[i].RaftEndpoint += "0"
	case "node":
		out.Members[i].NodeEndpoint += "0"
	}
	return out
}

func TestRosterRefusesAnIDListedTwice(t *testing.T) {
	m := RosterMember{ID: "n1", Seat: 1, RaftEndpoint: "10.0.0.1:6680", Key: fill(32, 1)}
	if _, err := ParseRoster(AppendRoster(nil, Roster{ClusterID: "c", Members: []RosterMember{m, m}})); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Fatalf("a roster naming n1 twice: %v", err)
	}
}
