package lease

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestVerifyAcceptsAGoodGrant(t *testing.T) {
	f := newFixture()
	got, r := f.verify(t)
	if r != nil {
		t.Fatalf("good grant refused: %v", r)
	}
	if got.Key != f.claims.Key || got.Serial != 7 || !got.ExpiresAt.Equal(f.claims.ExpiresAt) || !got.WorkerKey.Equal(workerKey.Public()) {
		t.Fatalf("verified claims %+v differ from the issued %+v", got, f.claims)
	}
}

// defect breaks one check of pace-node §5.4 on a fixture that passes every
// other.
type defect struct {
	name  string
	want  Reason
	apply func(*fixture)
}

// defectsInCheckOrder lists one defect per check, in the order the checks
// run (pace-node §5.4, pace-wire §1.15.1).
var defectsInCheckOrder = []defect{
	{"token does not decode", ReasonUnauthorized, func(f *fixture) { f.claims.SignerID = "" /* Issue refuses; see token() */ }},
	{"roster names no voter", ReasonNoRoster, func(f *fixture) { f.ctx.Roster = leasetest.NewRoster(testCluster) }},
	{"no leader for 65 min", ReasonIsolated, func(f *fixture) { f.ctx.LeaderHeardAt = f.ctx.Now.Add(-IsolationLimit - time.Second) }},
	{"signer's key revoked", ReasonSignerRevoked, func(f *fixture) { f.roster.Revoke(schedulerKey.Public()) }},
	{"another cluster", ReasonWrongCluster, func(f *fixture) { f.claims.ClusterID = "c2" }},
	{"another endpoint", ReasonEndpointMismatch, func(f *fixture) { f.claims.Endpoint = endpointB }},
	{"toolchain not served", ReasonUnknownFingerprint, func(f *fixture) { f.ctx.Serves = func(string) bool { return false } }},
	{"past expiry plus slack", ReasonExpired, func(f *fixture) { f.ctx.Now = f.claims.ExpiresAt.Add(ClockSlack + time.Millisecond) }},
	{"already spent", ReasonReplayed, func(f *fixture) { f.preSpend = true }},
}

// tokenOf issues the fixture's token, or junk when the claims cannot be
// issued (the decode defect).
func tokenOf(t *testing.T, f *fixture) string {
	if f.claims.SignerID == "" {
		return "this is not a lease token"
	}
	return f.token(t)
}

// TestVerifyChecksInOrder stacks defects i..n on one grant: the check of
// defect i must fire, which proves every earlier check passed and that the
// later broken ones were not consulted first.
func TestVerifyChecksInOrder(t *testing.T) {
	for i, d := range defectsInCheckOrder {
		t.Run(d.name, func(t *testing.T) {
			f := newFixture()
			for _, later := range defectsInCheckOrder[i:] {
				later.apply(f)
			}
			_, r := f.verifyText(t, tokenOf(t, f))
			if r == nil || r.Reason != d.want {
				t.Fatalf("with defects %d.. stacked: got %v, want reason %q", i, r, d.want.CounterSuffix())
			}
		})
	}
}

// TestVerifyEachRefusalAlone breaks exactly one check per case.
func TestVerifyEachRefusalAlone(t *testing.T) {
	for _, d := range defectsInCheckOrder {
		t.Run(d.name, func(t *testing.T) {
			f := newFixture()
			d.apply(f)
			_, r := f.verifyText(t, tokenOf(t, f))
			if r == nil || r.Reason != d.want {
				t.Fatalf("got %v, want %q", r, d.want.CounterSuffix())
			}
			if !errors.Is(r, d.want) {
				t.Fatalf("errors.Is(refusal, %v) is false", d.want)
			}
			if r.Code() != d.want.Code() || r.Wire().Code != d.want.Code() || r.Wire().Message != r.Message {
				t.Fatalf("refusal %v does not carry its reason's code", r)
			}
		})
	}
}

func TestVerifyMoreRefusals(t *testing.T) {
	cases := []defect{
		{"empty token", ReasonUnauthorized, func(f *fixture) { f.claims.SignerID = "" }},
		{"signer is no member", ReasonUnauthorized, func(f *fixture) { f.claims.SignerID = "n9" }},
		{"voter id, stranger's key", ReasonUnauthorized, func(f *fixture) { f.signer = strangerKey }},
		{"signed by a learner", ReasonUnauthorized, func(f *fixture) { f.claims.SignerID, f.signer = "w1", workerKey }},
		{"no roster at all", ReasonNoRoster, func(f *fixture) { f.ctx.Roster = nil }},
		{"never heard a leader", ReasonIsolated, func(f *fixture) { f.ctx.LeaderHeardAt = time.Time{} }},
		{"request names another toolchain", ReasonUnknownFingerprint, func(f *fixture) { f.ctx.RequestFingerprint = "fp-clang-18" }},
		{"no Serves function", ReasonUnknownFingerprint, func(f *fixture) { f.ctx.Serves = nil }},
		{"expiry beyond any lifetime", ReasonExpired, func(f *fixture) {
			f.claims.ExpiresAt = f.ctx.Now.Add(MaxLifetime + ClockSlack + time.Second)
		}},
	}
	for _, d := range cases {
		t.Run(d.name, func(t *testing.T) {
			f := newFixture()
			d.apply(f)
			if _, r := f.verifyText(t, tokenOf(t, f)); r == nil || r.Reason != d.want {
				t.Fatalf("got %v, want %q", r, d.want.CounterSuffix())
			}
		})
	}
}

func TestVerifyBoundaries(t *testing.T) {
	cases := []struct {
		name  string
		apply func(*fixture)
		want  Reason // 0: accepted
	}{
		{"exactly at expiry plus slack", func(f *fixture) { f.ctx.Now = f.claims.ExpiresAt.Add(ClockSlack) }, 0},
		{"one millisecond past it", func(f *fixture) { f.ctx.Now = f.claims.ExpiresAt.Add(ClockSlack + time.Millisecond) }, ReasonExpired},
		{"leader heard exactly 65 min ago", func(f *fixture) { f.ctx.LeaderHeardAt = f.ctx.Now.Add(-IsolationLimit) }, 0},
		{"and one second more", func(f *fixture) { f.ctx.LeaderHeardAt = f.ctx.Now.Add(-IsolationLimit - time.Second) }, ReasonIsolated},
		{"expiry at the far horizon", func(f *fixture) { f.claims.ExpiresAt = f.ctx.Now.Add(MaxLifetime + ClockSlack) }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture()
			c.apply(f)
			_, r := f.verify(t)
			switch {
			case c.want == 0 && r != nil:
				t.Fatalf("refused at the boundary: %v", r)
			case c.want != 0 && (r == nil || r.Reason != c.want):
				t.Fatalf("got %v, want %q", r, c.want.CounterSuffix())
			}
		})
	}
}

func TestTokenForEndpointARefusedAtEndpointB(t *testing.T) {
	f := newFixture()
	f.ctx.Endpoint = endpointB
	_, r := f.verify(t)
	if r == nil || r.Reason != ReasonEndpointMismatch || r.Code() != wire.CodeLeaseEndpointMismatch {
		t.Fatalf("got %v, want lease-endpoint-mismatch", r)
	}
	if !strings.Contains(r.Message, endpointA) || !strings.Contains(r.Message, endpointB) {
		t.Fatalf("message %q does not name both endpoints", r.Message)
	}
}

// TestALeaseForTheEndpointAWorkerMovedFromIsHonouredUntilItExpires: a grant for the
// endpoint a worker advertised before its move is honoured while it lasts; one that could only
// have been granted after the move, or for an endpoint the worker never had, is refused.
func TestALeaseForTheEndpointAWorkerMovedFromIsHonouredUntilItExpires(t *testing.T) {
	cases := []struct {
		name    string
		movedAt func(f *fixture) time.Time
		former  string
		ok      bool
	}{
		{"granted before the move", func(f *fixture) time.Time { return f.ctx.Now.Add(-time.Minute) }, endpointA, true},
		{"expiring a lifetime after the move", func(f *fixture) time.Time { return f.claims.ExpiresAt.Add(-MaxLifetime - ClockSlack) }, endpointA, true},
		{"granted after the move", func(f *fixture) time.Time {
			return f.claims.ExpiresAt.Add(-MaxLifetime - ClockSlack - time.Millisecond)
		}, endpointA, false},
		{"an endpoint this worker never had", func(f *fixture) time.Time { return f.ctx.Now }, "10.9.9.9:6674", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture()
			f.ctx.Endpoint = endpointB // moved from A to B
			movedAt := c.movedAt(f)
			f.ctx.MovedFrom = func(e string) (time.Time, bool) { return movedAt, e == c.former }
			_, r := f.verify(t)
			switch {
			case c.ok && r != nil:
				t.Fatalf("refused: %v", r)
			case !c.ok && (r == nil || r.Reason != ReasonEndpointMismatch):
				t.Fatalf("got %v, want lease-endpoint-mismatch", r)
			}
		})
	}
	f := newFixture()
	f.ctx.Endpoint = endpointB
	f.ctx.MovedFrom = func(string) (time.Time, bool) { return f.ctx.Now, true }
	f.ctx.Now = f.claims.ExpiresAt.Add(ClockSlack + time.Millisecond)
	if _, r := f.verify(t); r == nil || r.Reason != ReasonExpired {
		t.Fatalf("an expired lease for the old endpoint: got %v, want expired", r)
	}
}

func TestReplayRefusedAtTheSameWorkerOnly(t *testing.T) {
	f := newFixture()
	text := f.token(t)
	v := NewVerifier(0)
	if _, r := v.Verify(text, f.ctx); r != nil {
		t.Fatalf("first use refused: %v", r)
	}
	_, r := v.Verify(text, f.ctx)
	if r == nil || r.Reason != ReasonReplayed || r.Code() != wire.CodeLeaseUnauthorized {
		t.Fatalf("second use: got %v, want replayed (lease-unauthorized)", r)
	}
	if _, r := NewVerifier(0).Verify(text, f.ctx); r != nil {
		t.Fatalf("another worker's spent set must not hold it: %v", r)
	}
	if v.Spent() != 1 {
		t.Fatalf("spent set holds %d grants, want 1", v.Spent())
	}
}

func TestRevokedSignerCountedApartFromStranger(t *testing.T) {
	forgotten := newFixture()
	forgotten.roster.Forget("n1").AddVoter("n2", strangerKey.Public())
	_, r := forgotten.verify(t)
	if r == nil || r.Reason != ReasonSignerRevoked || r.Counter() != "pace_worker_jobs_refused_lease_signer_revoked_total" {
		t.Fatalf("grant by a forgotten voter: got %v, want signer_revoked", r)
	}

	impostor := newFixture()
	impostor.roster.Forget("n1").AddVoter("n2", strangerKey.Public())
	impostor.signer = leasetest.NewSigner("impostor") // claims n1's id, lacks its key
	if _, r := impostor.verify(t); r == nil || r.Reason != ReasonUnauthorized {
		t.Fatalf("stranger using a forgotten voter's id: got %v, want unauthorized", r)
	}

	plain := newFixture()
	plain.roster.Forget("n1").AddVoter("n2", strangerKey.Public())
	plain.ctx.Roster = struct{ Roster }{plain.roster} // hides ForgottenKeys
	if _, r := plain.verify(t); r == nil || r.Reason != ReasonUnauthorized {
		t.Fatalf("roster without forgotten keys: got %v, want unauthorized", r)
	}
}

func TestSpentSetFullRefusesRatherThanForgets(t *testing.T) {
	f := newFixture()
	v := NewVerifier(2)
	for serial := uint64(1); serial <= 3; serial++ {
		f.claims.Serial = serial
		_, r := v.Verify(f.token(t), f.ctx)
		if serial <= 2 && r != nil {
			t.Fatalf("grant %d refused: %v", serial, r)
		}
		if serial == 3 && (r == nil || r.Reason != ReasonSpentSetFull || r.Code() != wire.CodeEndpointBusy) {
			t.Fatalf("third grant into a set of 2: got %v, want spent_set_full", r)
		}
	}
	f.ctx.Now = f.claims.ExpiresAt.Add(ClockSlack + time.Millisecond)
	f.claims.ExpiresAt = f.ctx.Now.Add(time.Minute)
	if _, r := v.Verify(f.token(t), f.ctx); r != nil {
		t.Fatalf("after the first grants aged out: %v", r)
	}
	if v.Spent() != 1 {
		t.Fatalf("spent set holds %d after pruning, want 1", v.Spent())
	}
}

func TestTamperedTokenIsUnauthorized(t *testing.T) {
	f := newFixture()
	raw, err := tokenEncoding.DecodeString(f.token(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for _, bit := range []byte{0x01, 0x80} {
			tampered := append([]byte(nil), raw...)
			tampered[i] ^= bit
			_, r := f.verifyText(t, tokenEncoding.EncodeToString(tampered))
			if r == nil || r.Reason != ReasonUnauthorized {
				t.Fatalf("byte %d ^ %#x: got %v, want unauthorized", i, bit, r)
			}
		}
	}
}

func TestTokenTextIsStrict(t *testing.T) {
	f := newFixture()
	text := f.token(t)
	for name, bad := range map[string]string{
		"padded":       text + "==",
		"std alphabet": strings.NewReplacer("-", "+", "_", "/").Replace(text) + "+/",
		"truncated":    text[:len(text)-1],
		"whitespace":   text + "\n",
		"too long":     strings.Repeat("A", MaxTokenLen+4),
	} {
		if _, r := f.verifyText(t, bad); r == nil || r.Reason != ReasonUnauthorized {
			t.Errorf("%s: got %v, want unauthorized", name, r)
		}
	}
}

func TestIssueRefusesClaimsOutOfBounds(t *testing.T) {
	cases := map[string]func(*Claims){
		"empty endpoint":     func(c *Claims) { c.Endpoint = "" },
		"long endpoint":      func(c *Claims) { c.Endpoint = strings.Repeat("e", MaxEndpointLen+1) },
		"non-UTF-8 endpoint": func(c *Claims) { c.Endpoint = "\xff:1" },
		"long fingerprint":   func(c *Claims) { c.Fingerprint = strings.Repeat("f", MaxFingerprintLen+1) },
		"empty key":          func(c *Claims) { c.Key = "" },
		"empty cluster":      func(c *Claims) { c.ClusterID = "" },
		"long signer":        func(c *Claims) { c.SignerID = strings.Repeat("n", MaxIDLen+1) },
		"expiry before 1970": func(c *Claims) { c.ExpiresAt = time.Unix(-1, 0) },
		"short worker key":   func(c *Claims) { c.WorkerKey = c.WorkerKey[:31] },
	}
	for name, mutate := range cases {
		f := newFixture()
		mutate(&f.claims)
		if _, err := Issue(f.claims, f.signer); !errors.Is(err, ErrMalformedToken) {
			t.Errorf("%s: Issue returned %v, want ErrMalformedToken", name, err)
		}
	}
}

func TestMaxTokenLenFitsTheLargestToken(t *testing.T) {
	f := newFixture()
	f.claims.Endpoint = strings.Repeat("e", MaxEndpointLen)
	f.claims.Fingerprint = strings.Repeat("f", MaxFingerprintLen)
	f.claims.Key = strings.Repeat("k", MaxKeyLen)
	f.claims.ClusterID = strings.Repeat("c", MaxIDLen)
	f.claims.SignerID = strings.Repeat("s", MaxIDLen)
	text := f.token(t)
	if len(text) > MaxTokenLen {
		t.Fatalf("largest token is %d characters, over MaxTokenLen %d", len(text), MaxTokenLen)
	}
	if _, err := Parse(text); err != nil {
		t.Fatalf("largest token does not parse: %v", err)
	}
}

func TestSignedByCluster(t *testing.T) {
	f := newFixture()
	good := f.token(t)
	if !SignedByCluster(good, f.roster) {
		t.Fatal("a token a voter signed is not recognised")
	}
	f.roster.Forget("n1").AddVoter("n2", strangerKey.Public())
	if !SignedByCluster(good, f.roster) {
		t.Fatal("a token a since-forgotten voter signed is the cluster's too")
	}
	other := newFixture()
	other.signer = strangerKey
	cases := map[string]string{"junk": "junk", "stranger's signature": other.token(t)}
	other.claims.ClusterID, other.signer = "c2", schedulerKey
	cases["another cluster"] = other.token(t)
	for name, text := range cases {
		if SignedByCluster(text, newFixture().roster) {
			t.Errorf("%s: recognised as the cluster's", name)
		}
	}
}
