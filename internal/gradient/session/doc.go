// Package session is gradient's handshake as one pure state machine (gradient-protocol §4,
// gradient-protocol §5): the four roles of gradient-protocol §4.1 — Authority (the server, a
// worker dialed in), Peer (the worker, dialing), Dialer (the server, dialing a worker) and
// Dialed (the worker, accepting) — plus reauth (gradient-protocol §4.3), the authorization
// decision (gradient-protocol §4.4, gradient-protocol §4.5) and capability negotiation
// (gradient-protocol §5).
//
// Every role is a value. Step takes the current value and one Event and returns the next
// value and an Output: the messages to send (in order), an optional Need, a Status
// (Continue, Running, Reauthorized, Pass or Ended) and, with Running or Reauthorized, the
// Result. Nothing here touches a socket, a clock, a database or a goroutine; the drivers
// (wsconn and the server and worker loops) own all of that.
//
// # Why a two-phase step instead of a Directory interface
//
// The server roles need facts only the server holds (registrations, team grants, cache
// subscriptions, which tokens verify, whether the worker already has a live session). Rather
// than calling out to an interface from inside Step, a role that needs a fact returns a Need
// (LookupWorker, VerifyTokens, ClaimSession) and the driver steps the answer back in
// (FactsAnswer, TokensAnswer, ClaimAnswer). This keeps the core pure and total: every input
// is a value, so tests and property checks can feed any sequence of messages and answers,
// replay it, and compare outputs, with no fakes inside the core. The driver keeps the parts
// that may block or fail — SQL, argon2, the live-session map — where it can apply its own
// context, deadline and error handling. It also makes the 496 check an atomic claim the
// driver performs (ClaimSession), which a read-only interface could not express without a
// race between two sessions of one worker.
//
// # Driving a role
//
//	role, out := session.NewPeer(cfg)             // or NewAuthority, NewDialer, NewDialed
//	for {
//		send(out.Send...)                         // always first, even when the session ends
//		if out.Status == session.Ended {
//			closeWith(out.End)                    // e.g. 1008 "<code> <reason>" after a Reject (gradient-server §10.4)
//			return
//		}
//		if out.Status == session.Running {
//			startJobLoop(out.Result)              // negotiated capabilities, grants
//		}
//		if out.Need != nil {
//			role, out = role.Step(answer(out.Need)) // answer before reading the socket again
//			continue
//		}
//		ev := next()                              // session.Received{Msg: m}, or a trigger
//		role, out = role.Step(ev)
//		if out.Status == session.Pass {
//			dispatch(ev.(session.Received).Msg)   // not a session message: the job loop's
//		}
//	}
//
// Rules the driver keeps: when Output.Need is set, the next event must be its answer (anything
// else ends the role with a Fault wrapping ErrOutOfTurn); triggers (ServerReauth on the server
// roles, PeersChanged on the worker roles) are stepped from the same loop as messages. An ended
// role stays ended: further steps return the same End and send nothing.
package session
