package session

import "github.com/buildfleet/buildfleet/internal/gradient/wire"

// Reauth on a server-dialed session (gradient-protocol §4.3): the server holds the tokens, so
// a reauth is a lookup followed by AuthUpdate alone, never AuthChallenge. A lookup that finds
// an active registration whose token this session did not carry cannot be settled on this
// socket (the worker verifies server tokens only in Authenticate), so the session closes and
// the next dial carries the token.

func (d Dialer) startReauth() (Dialer, Output) {
	if d.phase != dRunning {
		d.queued = true
		return d, Output{}
	}
	return d.ask(needLookup, LookupWorker{WorkerID: d.workerID})
}

func (d Dialer) reauthFacts(f WorkerFacts) (Dialer, Output) {
	if r, ok := Precheck(f); !ok && r.Reason != ReasonNoTeamGrant {
		return d.reject(r)
	}
	if d.hasNewDialToken(f) {
		return d.finish(End{Kind: EndRedial, WorkerID: d.workerID, Registered: true})
	}
	result, update := growGrants(d.result, d.decide())
	d.result = result
	return d, Output{Send: []wire.Message{update}, Status: Reauthorized, Result: d.result.clone()}
}

// hasNewDialToken reports an active registration the server could prove to the worker but
// did not: it holds the token for this URL and the token was not in Authenticate.
func (d Dialer) hasNewDialToken(f WorkerFacts) bool {
	sent := toSet(d.sent)
	for _, r := range f.ActiveRegistrations() {
		if r.HasDialToken && !sent[r.PeerID] {
			return true
		}
	}
	return false
}

func (d Dialer) ask(k needKind, n Need) (Dialer, Output) {
	d.need = k
	return d, Output{Need: n}
}

func (d Dialer) reject(r Rejection) (Dialer, Output) {
	d, out := d.finish(d.endWith(EndRejectSent, r))
	out.Send = []wire.Message{&wire.ServerReject{Code: r.Code, Reason: r.Reason}}
	return d, out
}

// endWith fills the bookkeeping fields. A dialed worker is registered (only registrations and
// team workers with a URL are dialed), and the worker checked the server's tokens before it
// answered, so nothing a Dialer sees happens before the token check.
func (d Dialer) endWith(k EndKind, r Rejection) End {
	return End{Kind: k, Code: r.Code, Reason: r.Reason, WorkerID: d.workerID, Registered: true}
}

func (d Dialer) finish(e End) (Dialer, Output) {
	d.phase, d.need, d.end = dEnded, needNone, e
	return d, ended(e)
}

// Running reports whether the handshake finished and the session is live.
func (d Dialer) Running() bool { return d.phase == dRunning }

// Result is the session's current outcome (zero before Running).
func (d Dialer) Result() Result { return d.result.clone() }

// Done reports how the session ended, once it has.
func (d Dialer) Done() (End, bool) { return d.end, d.phase == dEnded }
