package session

import (
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Reauth on a worker-dialed session (gradient-protocol §4.3): LookupWorker,
// AuthChallenge{all active peers}, AuthResponse, VerifyTokens, AuthUpdate{union, failures}.
// One round runs at a time; triggers during a round (or during the handshake) queue one more
// round, which starts as soon as the current one ends, so every trigger is followed by a
// round that began after it.

func (a Authority) startReauth() (Authority, Output) {
	if a.phase != aRunning || a.reauth != reauthIdle {
		a.queued = true
		return a, Output{}
	}
	a.reauth = reauthLookup
	return a.ask(needLookup, LookupWorker{WorkerID: a.workerID})
}

// reauthFacts ends the session when the worker lost its identity (all registrations
// deactivated or gone, team worker disabled); anything else, including a team no project
// grants any more, keeps the session and challenges again: reauth never revokes.
func (a Authority) reauthFacts(f WorkerFacts) (Authority, Output) {
	if r, ok := Precheck(f); !ok && r.Reason != ReasonNoTeamGrant {
		return a.reject(r)
	}
	a.challenged, a.reauth = f.Challenge(), reauthChallenged
	return a, Output{Send: []wire.Message{&wire.AuthChallenge{Peers: slices.Clone(a.challenged)}}}
}

func (a Authority) reauthDecided(d Decision) (Authority, Output) {
	result, update := growGrants(a.result, d)
	a.result, a.reauth = result, reauthIdle
	out := Output{Send: []wire.Message{update}, Status: Reauthorized, Result: a.result.clone()}
	return a.runQueued(out)
}

// runQueued starts a queued reauth round after out, adding its Need to out.
func (a Authority) runQueued(out Output) (Authority, Output) {
	if !a.queued {
		return a, out
	}
	a.queued = false
	a, next := a.startReauth()
	out.Need = next.Need
	return a, out
}

func (a Authority) ask(k needKind, n Need) (Authority, Output) {
	a.need = k
	return a, Output{Need: n}
}

// reject refuses the worker: Reject{code, reason}, then close.
func (a Authority) reject(r Rejection) (Authority, Output) {
	a, out := a.finish(a.endWith(EndRejectSent, r))
	out.Send = []wire.Message{&wire.ServerReject{Code: r.Code, Reason: r.Reason}}
	return a, out
}

func (a Authority) endWith(k EndKind, r Rejection) End {
	return End{
		Kind: k, Code: r.Code, Reason: r.Reason, WorkerID: a.workerID,
		BeforeTokenCheck: a.phase < aVerifying,
		Registered:       a.facts.Registered(),
	}
}

func (a Authority) finish(e End) (Authority, Output) {
	a.phase, a.need, a.end = aEnded, needNone, e
	return a, ended(e)
}

// Running reports whether the handshake finished and the session is live.
func (a Authority) Running() bool { return a.phase == aRunning }

// Result is the session's current outcome (zero before Running).
func (a Authority) Result() Result { return a.result.clone() }

// Done reports how the session ended, once it has.
func (a Authority) Done() (End, bool) { return a.end, a.phase == aEnded }
