package lease

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func genText(maxLen int, utf8Only bool) *rapid.Generator[string] {
	if utf8Only {
		return rapid.StringOfN(rapid.Rune(), 1, maxLen/4, maxLen).Filter(func(s string) bool { return len(s) <= maxLen })
	}
	return rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(rapid.Byte(), 1, maxLen).Draw(t, "bytes"))
	})
}

func genClaims() *rapid.Generator[Claims] {
	return rapid.Custom(func(t *rapid.T) Claims {
		c := Claims{
			Serial:      rapid.Uint64().Draw(t, "serial"),
			Endpoint:    genText(MaxEndpointLen, true).Draw(t, "endpoint"),
			Fingerprint: genText(MaxFingerprintLen, false).Draw(t, "fingerprint"),
			Key:         genText(MaxKeyLen, false).Draw(t, "key"),
			ExpiresAt:   time.UnixMilli(rapid.Int64Min(0).Draw(t, "expiresMs")).UTC(),
			ClusterID:   genText(MaxIDLen, true).Draw(t, "cluster"),
			Epoch:       rapid.Uint64().Draw(t, "epoch"),
			SignerID:    genText(MaxIDLen, true).Draw(t, "signer"),
		}
		if rapid.Bool().Draw(t, "hasWorkerKey") {
			c.WorkerKey = ed25519.PublicKey(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "workerKey"))
		}
		return c
	})
}

func claimsEqual(a, b Claims) bool {
	return a.Serial == b.Serial && a.Endpoint == b.Endpoint && a.Fingerprint == b.Fingerprint &&
		a.Key == b.Key && a.ExpiresAt.Equal(b.ExpiresAt) && a.ClusterID == b.ClusterID &&
		a.Epoch == b.Epoch && a.SignerID == b.SignerID && bytes.Equal(a.WorkerKey, b.WorkerKey)
}

// TestClaimsRoundTrip: every valid claim set issues a token that parses back
// to the same claims, carries a valid signature by its signer only, and is
// within MaxTokenLen.
func TestClaimsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genClaims().Draw(t, "claims")
		text, err := Issue(c, schedulerKey)
		if err != nil {
			t.Fatalf("Issue(%+v): %v", c, err)
		}
		if len(text) > MaxTokenLen {
			t.Fatalf("token of %d characters exceeds MaxTokenLen", len(text))
		}
		tok, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if !claimsEqual(tok.Claims, c) {
			t.Fatalf("round trip changed the claims:\n got %+v\nwant %+v", tok.Claims, c)
		}
		if !tok.SignatureValid(schedulerKey.Public()) || tok.SignatureValid(strangerKey.Public()) {
			t.Fatalf("signature validity wrong")
		}
	})
}

// TestDistinctClaimsSpendApart: two grants that differ in any claim have
// distinct spent ids, so spending one never refuses the other.
func TestDistinctClaimsSpendApart(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genClaims().Draw(t, "a")
		b := genClaims().Draw(t, "b")
		ta, _ := Issue(a, schedulerKey)
		tb, _ := Issue(b, schedulerKey)
		pa, _ := Parse(ta)
		pb, _ := Parse(tb)
		if (pa.SpentID() == pb.SpentID()) != claimsEqual(a, b) {
			t.Fatalf("spent ids equal=%v for claims equal=%v", pa.SpentID() == pb.SpentID(), claimsEqual(a, b))
		}
	})
}
