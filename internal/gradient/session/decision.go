package session

import "github.com/buildfleet/buildfleet/internal/gradient/wire"

// Rejection is a Reject's code and reason; the zero value means no rejection.
type Rejection struct {
	Code   uint16
	Reason string
}

// Decision is the outcome of the gradient-protocol §4.4 authorization decision.
type Decision struct {
	Reject     Rejection // zero when accepted
	Authorized []string  // peer IDs granted (projects for a team worker), challenge order
	// Failed lists every challenged peer whose token failed ("invalid token", "no token
	// provided") and every validated project demoted for lacking a cache ("project has no
	// cache subscribed"). Filled on rejections after the token check too, for reauth.
	Failed []wire.FailedPeer
}

// Accepted reports whether the decision admits the session.
func (d Decision) Accepted() bool { return d.Reject.Code == 0 }

// AuthInput is what the gradient-protocol §4.4 decision looks at beyond the facts: which
// challenged peers were offered a token and which of those verified. Open mode (a
// server-dialed, unregistered worker accepted) is left out (gradient-server §10.9), so
// server-dialed and inbound sessions decide alike.
type AuthInput struct {
	Facts   WorkerFacts
	Offered []string // challenged peers a token was presented for
	Valid   []string // of Offered, those whose token verified
}

// Precheck runs the steps of gradient-protocol §4.4 that do not depend on tokens (steps 1 and
// 2): a team worker that is disabled or that no project grants, and an ID with no active
// registration. The server roles run it right after the lookup, so a worker that can only be
// refused is refused without a challenge round (gradient-server §10.8 generalised); Authorize
// runs it again first.
func Precheck(f WorkerFacts) (Rejection, bool) {
	if t := f.Team; t != nil {
		switch {
		case !t.Enabled:
			return Rejection{CodeForbidden, ReasonDeactivated}, false
		case len(t.Grants) == 0:
			return Rejection{CodeForbidden, ReasonNoTeamGrant}, false
		}
		return Rejection{}, true
	}
	if len(f.ActiveRegistrations()) > 0 {
		return Rejection{}, true
	}
	if len(f.Registrations) > 0 {
		return Rejection{CodeForbidden, ReasonDeactivated}, false
	}
	return Rejection{CodeForbidden, ReasonUnknownWorker}, false
}

// Authorize is the authorization decision of gradient-protocol §4.4, in its order:
//  1. team worker: disabled → 403 "worker is deactivated"; no granting project → 403 "no
//     project grants this team's workers"; a valid team token expands to the granting projects;
//  2. no active registration → 403 "worker is deactivated" (some exist) or "unknown worker";
//  3. no token validated → 401 "no valid peer tokens provided";
//  4. validated projects without a cache move to failed_peers; none left → 495;
//  5. otherwise accept, with each failure's reason in failed_peers.
func Authorize(in AuthInput) Decision {
	if r, ok := Precheck(in.Facts); !ok {
		return Decision{Reject: r}
	}
	offered, valid := toSet(in.Offered), toSet(in.Valid)
	var d Decision
	var validated []Registration
	for _, peer := range in.Facts.Challenge() {
		switch {
		case offered[peer] && valid[peer]:
			validated = append(validated, expand(in.Facts, peer)...)
		case offered[peer]:
			d.Failed = append(d.Failed, wire.FailedPeer{PeerID: peer, Reason: FailedInvalidToken})
		default:
			d.Failed = append(d.Failed, wire.FailedPeer{PeerID: peer, Reason: FailedNoToken})
		}
	}
	if len(validated) == 0 {
		d.Reject = Rejection{CodeUnauthorized, ReasonNoValidTokens}
		return d
	}
	for _, r := range validated {
		if r.Kind == PeerProject && !r.HasCache {
			d.Failed = append(d.Failed, wire.FailedPeer{PeerID: r.PeerID, Reason: FailedNoCache})
			continue
		}
		d.Authorized = append(d.Authorized, r.PeerID)
	}
	if len(d.Authorized) == 0 {
		d.Reject = Rejection{CodeNoCache, ReasonNoCache}
	}
	return d
}

// expand turns one validated challenged peer into the peers it grants: the registration
// itself, or for a team worker every granting project (first grant per project wins).
func expand(f WorkerFacts, peer string) []Registration {
	if f.Team == nil {
		for _, r := range f.ActiveRegistrations() {
			if r.PeerID == peer {
				return []Registration{r}
			}
		}
		return nil
	}
	seen := map[string]bool{}
	var out []Registration
	for _, g := range f.Team.Grants {
		if !seen[g.ProjectID] {
			seen[g.ProjectID] = true
			out = append(out, Registration{PeerID: g.ProjectID, Kind: PeerProject, Active: true, HasCache: g.HasCache})
		}
	}
	return out
}

// selectTokens keeps the pairs the decision looks at: the first pair per peer ID
// (gradient-protocol §4.4 step 5), for challenged peers only (tokens for unchallenged peers
// are ignored). With a nil challenged list every peer counts (the dialed worker verifies
// everything it was sent).
func selectTokens(tokens []wire.PeerToken, challenged []string) []wire.PeerToken {
	want := toSet(challenged)
	seen := make(map[string]bool, len(tokens))
	var out []wire.PeerToken
	for _, t := range tokens {
		if seen[t.PeerID] || (challenged != nil && !want[t.PeerID]) {
			continue
		}
		seen[t.PeerID] = true
		out = append(out, t)
	}
	return out
}

func peerIDs(tokens []wire.PeerToken) []string {
	ids := make([]string, len(tokens))
	for i, t := range tokens {
		ids[i] = t.PeerID
	}
	return ids
}

func toSet(ids []string) map[string]bool {
	s := make(map[string]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}
