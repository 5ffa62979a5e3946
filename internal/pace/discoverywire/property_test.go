package discoverywire

import (
	"bytes"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

func text(min, max int) *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune("abcz09-.:é")), min, max, max)
}

// summaries draws every summary verbs.ParseFleetSummary accepts, up to its bounds.
func summaries() *rapid.Generator[verbs.FleetSummary] {
	return rapid.Custom(func(t *rapid.T) verbs.FleetSummary {
		s := verbs.FleetSummary{
			ClusterID: text(1, verbs.MaxID).Draw(t, "cluster"), State: rapid.Uint8Range(1, 3).Draw(t, "state"),
			CreatedAt: rapid.Uint64().Draw(t, "created"), LeaderID: text(0, verbs.MaxID).Draw(t, "leader"),
			LeaderNodeEndpoint: text(0, verbs.MaxEndpoint).Draw(t, "leaderAt"), NodeID: text(1, verbs.MaxID).Draw(t, "node"),
			RaftEndpoint: text(0, verbs.MaxEndpoint).Draw(t, "raft"), NodeEndpoint: text(0, verbs.MaxEndpoint).Draw(t, "at"),
		}
		if n := rapid.IntRange(0, verbs.MaxSummaryMembers).Draw(t, "members"); n > 0 {
			s.Members = rapid.SliceOfN(text(1, verbs.MaxID), n, n).Draw(t, "member")
		}
		s.MemberTotal = uint64(len(s.Members)) + rapid.Uint64Range(0, 1000).Draw(t, "more")
		if rapid.Bool().Draw(t, "leaderKnown") {
			s.LeaderKey = rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "leaderKey")
		}
		return s
	})
}

func TestPropertyBeaconRoundTripsAtItsProofsLength(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := summaries().Draw(t, "summary")
		b := AppendBeacon(nil, s)
		d, err := Parse(b)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if d.Kind != KindBeacon || !reflect.DeepEqual(d.Beacon.Summary, s) {
			t.Fatalf("parsed %+v\nwant   %+v", d.Beacon.Summary, s)
		}
		if len(b) != ProofLen(len(d.Beacon.SummaryRaw)) || len(b) > MaxDatagram {
			t.Fatalf("a %d-byte beacon, its proof %d bytes", len(b), ProofLen(len(d.Beacon.SummaryRaw)))
		}
	})
}

func TestPropertyChallengeRoundTripsAtTheSizeAsked(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c Challenge
		copy(c.Cookie[:], rapid.SliceOfN(rapid.Byte(), CookieLen, CookieLen).Draw(t, "cookie"))
		c.ClusterID = text(1, verbs.MaxID).Draw(t, "cluster")
		size := rapid.IntRange(0, MaxDatagram+10).Draw(t, "size")
		b, err := AppendChallenge(nil, c, size)
		if err != nil {
			if size >= HeaderLen+3*prefix+CookieLen+len(c.ClusterID) && size <= MaxDatagram {
				t.Fatalf("size %d refused: %v", size, err)
			}
			return
		}
		d, err := Parse(b)
		if err != nil || len(b) != size || d.Challenge != c {
			t.Fatalf("size %d: %d bytes, %+v, %v", size, len(b), d.Challenge, err)
		}
	})
}

// A proof round-trips, verifies for the challenger it answered and no other, and is never
// longer than the beacon of its summary, so it always fits the challenge padded to that.
func TestPropertyProofRoundTripsAndVerifies(t *testing.T) {
	key := testKey(t, 3)
	rapid.Check(t, func(t *rapid.T) {
		s := summaries().Draw(t, "summary")
		var c Challenge
		copy(c.Cookie[:], rapid.SliceOfN(rapid.Byte(), CookieLen, CookieLen).Draw(t, "cookie"))
		c.ClusterID = text(1, verbs.MaxID).Draw(t, "cluster")
		b := AppendProof(nil, SignProof(key, c, s))
		d, err := Parse(b)
		if err != nil || d.Kind != KindProof || !reflect.DeepEqual(d.Proof.Summary, s) || d.Proof.Cookie != c.Cookie {
			t.Fatalf("parsed %+v, %v", d, err)
		}
		if !d.Proof.Verify(c.ClusterID) || d.Proof.Verify(c.ClusterID+"x") {
			t.Fatal("verifies for the wrong challenger, or not for the right one")
		}
		if len(b) != len(AppendBeacon(nil, s)) || !bytes.Equal(d.Proof.Key, key.Public()) {
			t.Fatalf("a %d-byte proof of a %d-byte beacon", len(b), len(AppendBeacon(nil, s)))
		}
	})
}
