package lease

import (
	"errors"
	"fmt"
	"time"
)

// Windows of the checks (pace-node §5.4).
const (
	// ClockSlack is the skew allowed between two machines' clocks, for
	// leases and machine tickets alike.
	ClockSlack = 5 * time.Minute
	// IsolationLimit is how long a worker may go without hearing a leader
	// before it refuses every grant: an hour plus the clock slack.
	IsolationLimit = 60*time.Minute + ClockSlack
	// MaxLifetime is the longest lease-lifetime a cluster may set
	// (pace-node §6.3). An expiry further ahead than this plus the slack is a
	// wrong clock.
	MaxLifetime = time.Hour
)

// Context is what the worker knows when a COMPILE arrives. Every field is
// required; nothing is skipped for a missing one.
type Context struct {
	Roster        Roster    // the fleet state this worker's consensus applied
	LeaderHeardAt time.Time // last message from a leader; the leader itself passes Now; zero = never
	Endpoint      string    // this worker's current advertised endpoint
	// MovedFrom, if set, says when this worker stopped advertising an endpoint it advertised
	// before (false: never did). A grant for such an endpoint is honoured until it expires.
	MovedFrom          func(endpoint string) (movedAt time.Time, ok bool)
	RequestFingerprint string                        // the COMPILE request's fingerprint field
	Serves             func(fingerprint string) bool // whether this worker serves a toolchain
	Now                time.Time
}

// Verifier checks lease tokens at one worker and spends each once. Safe
// for concurrent use.
type Verifier struct {
	spent *SpentSet
}

// NewVerifier returns a Verifier whose spent set holds spentCapacity
// grants (below 1: DefaultSpentCapacity).
func NewVerifier(spentCapacity int) *Verifier {
	return &Verifier{spent: NewSpentSet(spentCapacity)}
}

// Spent is the number of grants the spent set holds.
func (v *Verifier) Spent() int { return v.spent.Len() }

// Verify runs the checks of pace-node §5.4 / pace-wire §1.15.1 in order and,
// when all pass, spends the grant and returns its claims. Call it before
// anything in the request is decompressed. A nil *Refusal means the grant is
// good.
func (v *Verifier) Verify(text string, c Context) (Claims, *Refusal) {
	tok, err := Parse(text)
	if err != nil {
		return Claims{}, refuse(ReasonUnauthorized, "the lease token does not decode: %v", err)
	}
	if r := checkRoster(c); r != nil {
		return Claims{}, r
	}
	if r := checkSigner(tok, c.Roster); r != nil {
		return Claims{}, r
	}
	if r := checkGrant(&tok.Claims, c); r != nil {
		return Claims{}, r
	}
	if r := v.spend(tok, c.Now); r != nil {
		return Claims{}, r
	}
	return tok.Claims, nil
}

func refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// checkRoster asks whether this worker can verify anybody's grant now.
func checkRoster(c Context) *Refusal {
	if c.Roster == nil || !c.Roster.HasVoters() {
		return refuse(ReasonNoRoster, "this worker's applied fleet state names no voter yet; it cannot verify grants until it applies its fleet's state")
	}
	if c.LeaderHeardAt.IsZero() {
		return refuse(ReasonIsolated, "this worker has not heard from a leader of its fleet since it started")
	}
	if silent := c.Now.Sub(c.LeaderHeardAt); silent > IsolationLimit {
		return refuse(ReasonIsolated, "this worker has heard from no leader of its fleet for %s (limit %s)", silent.Truncate(time.Second), IsolationLimit)
	}
	return nil
}

// checkSigner verifies the signature under the key the roster holds for the
// signer, telling a revoked signer from a stranger only after a signature
// verifies, so nobody can inflate the revoked count with junk.
func checkSigner(tok *Token, r Roster) *Refusal {
	id := tok.Claims.SignerID
	key, voter := r.VoterKey(id)
	if !voter {
		if forgotten, ok := r.(ForgottenKeys); ok {
			if old, ok := forgotten.ForgottenKey(id); ok && tok.SignatureValid(old) {
				return refuse(ReasonSignerRevoked, "the lease was signed by %q, a member the cluster forgot and whose key it revoked", id)
			}
		}
		return refuse(ReasonUnauthorized, "the lease names signer %q, which is not a live voter of this cluster", id)
	}
	if !tok.SignatureValid(key) {
		return refuse(ReasonUnauthorized, "the lease signature does not verify under voter %q's key", id)
	}
	if r.Revoked(key) {
		return refuse(ReasonSignerRevoked, "the lease was signed by voter %q with a key the cluster revoked", id)
	}
	return nil
}

// checkGrant compares an authentic grant with this worker and this moment.
func checkGrant(claims *Claims, c Context) *Refusal {
	if cluster := c.Roster.ClusterID(); claims.ClusterID != cluster {
		return refuse(ReasonWrongCluster, "the lease was issued in cluster %q; this worker belongs to %q", claims.ClusterID, cluster)
	}
	if claims.Endpoint != c.Endpoint && !grantedBeforeAMove(claims, c) {
		return refuse(ReasonEndpointMismatch, "the lease was issued for worker endpoint %q; this worker advertises %q", claims.Endpoint, c.Endpoint)
	}
	if claims.Fingerprint != c.RequestFingerprint {
		return refuse(ReasonUnknownFingerprint, "the lease grants toolchain %q but the request names %q", claims.Fingerprint, c.RequestFingerprint)
	}
	if c.Serves == nil || !c.Serves(claims.Fingerprint) {
		return refuse(ReasonUnknownFingerprint, "this worker does not serve toolchain %q", claims.Fingerprint)
	}
	if deadline := claims.ExpiresAt.Add(ClockSlack); c.Now.After(deadline) {
		return refuse(ReasonExpired, "the lease expired at %s, %s ago (slack %s); a clock on one of the two machines may be wrong",
			claims.ExpiresAt.Format(time.RFC3339), c.Now.Sub(claims.ExpiresAt).Truncate(time.Second), ClockSlack)
	}
	if horizon := c.Now.Add(MaxLifetime + ClockSlack); claims.ExpiresAt.After(horizon) {
		return refuse(ReasonExpired, "the lease expires at %s, further ahead than any lease lifetime; a clock on one of the two machines is wrong",
			claims.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

func (v *Verifier) spend(tok *Token, now time.Time) *Refusal {
	err := v.spent.Spend(tok.SpentID(), tok.Claims.ExpiresAt.Add(ClockSlack), now)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrAlreadySpent):
		return refuse(ReasonReplayed, "lease %d from %q was already used at this worker; a lease buys one compile", tok.Claims.Serial, tok.Claims.SignerID)
	default:
		return refuse(ReasonSpentSetFull, "this worker holds %d unexpired spent leases, its limit; try again shortly", v.spent.Capacity())
	}
}

// SignedByCluster reports whether text is a lease token of r's cluster
// signed by one of its members, live or forgotten: the scheduler's test of
// a RELEASE whose token matches no lease it holds (a token this cluster
// never signed counts as unauthorized there). It spends nothing.
func SignedByCluster(text string, r Roster) bool {
	tok, err := Parse(text)
	if err != nil || r == nil || tok.Claims.ClusterID != r.ClusterID() {
		return false
	}
	if key, ok := r.MemberKey(tok.Claims.SignerID); ok && tok.SignatureValid(key) {
		return true
	}
	if forgotten, ok := r.(ForgottenKeys); ok {
		key, ok := forgotten.ForgottenKey(tok.Claims.SignerID)
		return ok && tok.SignatureValid(key)
	}
	return false
}

// grantedBeforeAMove reports a grant for an endpoint this worker advertised until it moved,
// which could have been granted before the move: the longest lifetime from the move covers its
// expiry. Such a lease names this machine by the address it had, and is honoured until it
// expires (pace-node §6.1); the expiry check that follows still applies.
func grantedBeforeAMove(claims *Claims, c Context) bool {
	if c.MovedFrom == nil {
		return false
	}
	movedAt, ok := c.MovedFrom(claims.Endpoint)
	return ok && !claims.ExpiresAt.After(movedAt.Add(MaxLifetime+ClockSlack))
}
