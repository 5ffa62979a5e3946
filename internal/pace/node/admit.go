package node

import (
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/admission"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// facts gathers what the admission fold needs about this request's caller, asking the
// roster afresh: a key revoked since the proof or the ticket stops admitting at once.
func (n *Node) facts(c *frameserver.Conn) admission.Facts {
	st := n.state(c)
	roster := n.roster()
	f := admission.Facts{Loopback: n.local.IsPeer(c.RemoteAddr()), FleetOpen: n.fleetOpen()}
	peer, err := st.proof.Proven()
	switch {
	case err == nil:
		f.Proven = true
		_, f.Voter = roster.VoterKey(peer.ID)
	case errors.Is(err, nodeproof.ErrKeyRevoked) || st.proof.PresentedRevokedKey():
		f.Revoked = true
	}
	if id := st.ticketMachine; id != "" {
		key, member := roster.MemberKey(id)
		switch {
		case member && !roster.Revoked(key):
			f.Ticket = true
			_, voter := roster.VoterKey(id)
			f.Voter = f.Voter || voter
		default:
			f.Revoked = f.Revoked || n.forgotten(id)
		}
	}
	return f
}

// forgotten reports whether id names a machine the cluster forgot, whose key is revoked.
func (n *Node) forgotten(id string) bool {
	_, ok := n.roster().ForgottenKey(id)
	return ok
}

func (n *Node) admit(c *frameserver.Conn) admission.Verdict {
	f := n.facts(c)
	v := admission.Decide(f)
	if f.Revoked {
		n.counters.requestsRefusedKeyRevoked.Add(1)
	}
	return v
}

// notAMember refuses a caller admit turned away, naming a revoked key when that was the cause
// (read from the same verdict, not a second look at the roster).
func (n *Node) notAMember(v admission.Verdict) frameserver.Reply {
	msg := "this node admits this machine and machines its cluster admits (node proof or machine ticket)"
	if v.Routes&admission.RevokedKey != 0 {
		msg = "the key this connection presented is revoked: the machine was forgotten by the cluster"
	}
	return frameserver.Refuse(wire.Refuse(wire.CodeNotAMember, "%s", msg))
}

// explain answers EXPLAIN-ADMISSION: `[u8 verdict][u32 routes][u8 standing or empty]
// [subject]` (pace-wire §1.13). With an empty subject it explains the asking connection, to
// anyone; about a machine (its member id or key text) it says how that machine would be
// admitted when it presents its key from another machine, and answers members only.
func (n *Node) explain(c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	f, subject := n.facts(c), ""
	if len(req.Fields[0]) != 0 {
		if !n.admit(c).Identified {
			n.counters.requestsRefusedNotAMember.Add(1)
			return frameserver.Refuse(wire.Refuse(wire.CodeNotAMember, "explaining another machine's admission is answered to members of this cluster"))
		}
		var known bool
		if f, subject, known = n.factsAbout(string(req.Fields[0])); !known {
			return frameserver.Ok(explanation(1, 0, nil, string(req.Fields[0])))
		}
	}
	v := admission.Decide(f)
	verdict, standing := uint8(1), []byte(nil) // outsider
	switch {
	case f.Revoked:
		verdict, standing = 3, []byte{4}
	case v.Admitted && f.Voter:
		verdict, standing = 2, []byte{1}
	case f.Proven || f.Ticket:
		verdict, standing = 2, []byte{2}
	case v.Admitted:
		verdict = 2
	}
	return frameserver.Ok(explanation(verdict, v.Routes, standing, subject))
}

func explanation(verdict uint8, routes admission.Route, standing []byte, subject string) []byte {
	body := wire.AppendU8Field(nil, verdict)
	body = wire.AppendU32Field(body, uint32(routes))
	body = wire.AppendField(body, standing)
	return wire.AppendStringField(body, subject)
}

// factsAbout are the admission facts of a machine presenting its own key to this node from
// another machine (by proof or by ticket): subject is a member id or a key in its text form.
// known is false when the roster neither holds nor revoked it.
func (n *Node) factsAbout(subject string) (f admission.Facts, id string, known bool) {
	roster := n.cons.State() // one state for the whole answer
	f.FleetOpen = n.fleetOpen()
	if key, err := edkey.Parse(subject); err == nil {
		if m, ok := roster.MemberByKey(key); ok {
			subject = m.ID
		} else if roster.Revoked(key) {
			return admission.Facts{Revoked: true}, subject, true
		}
	}
	if m, ok := roster.Member(subject); ok {
		_, f.Voter = roster.VoterKey(subject)
		f.Proven, f.Ticket, f.Loopback = true, true, subject == n.id.NodeID
		return f, m.ID, true
	}
	if _, forgotten := roster.ForgottenKey(subject); forgotten {
		return admission.Facts{Revoked: true}, subject, true
	}
	return f, subject, false
}

// mintTicket mints a machine ticket for a client on this machine (pace-wire §1.15.2):
// loopback and this host's own addresses only, naming exactly the endpoint the client will
// dial.
func (n *Node) mintTicket(c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if !n.local.IsPeer(c.RemoteAddr()) {
		n.counters.mintsRefusedNotLocal.Add(1)
		return frameserver.Refuse(wire.Refuse(wire.CodeNotAMember, "MINT-TICKET answers this machine only"))
	}
	r, err := verbs.ParseMintTicket(req.Fields)
	if err != nil {
		n.counters.mintsRefusedMalformed.Add(1)
		ref, _ := verbs.RefusalOf(err)
		return frameserver.Refuse(ref)
	}
	ticket, err := n.id.MintTicket(r.Audience, n.now())
	if err != nil {
		n.counters.mintsRefusedNoRandom.Add(1)
		return frameserver.Refuse(wire.Refuse(wire.CodeMalformedFrame, "%v", err))
	}
	n.counters.ticketsMinted.Add(1)
	return frameserver.Ok(verbs.MintTicketOk{Ticket: ticket}.Append(nil))
}

// auth answers AUTH: a machine ticket admits the connection's machine after it verifies; a
// password establishes nothing at a node and is answered Ok, so a client configured with a
// token for its cache is never broken by pointing at a node (pace-wire §5.9).
func (n *Node) auth(c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	kind, err := wire.U8(req.Fields[0])
	switch {
	case err != nil || (kind != 1 && kind != 2) || (kind == 2 && len(req.Fields[1]) != 0):
		return frameserver.Refuse(wire.Refuse(wire.CodeMalformedFrame, "AUTH kind must be 01 password or 02 machine ticket (empty username)"))
	case kind == 1:
		return frameserver.Ok(nil)
	}
	t, refusal := identityVerifyTicket(n, req.Fields[2])
	if refusal != nil {
		n.counters.ticketsRefused[refusal.Reason].Add(1)
		return frameserver.Refuse(refusal.Wire())
	}
	n.counters.ticketsAccepted.Add(1)
	n.state(c).ticketMachine = t.MachineID
	return frameserver.Ok(nil)
}

// cordon answers CORDON from this machine only: `[u8 action: 00 lift, 01 cordon]` ⇒
// `[u8 state][u32 inFlight]`.
func (n *Node) cordon(c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	if !n.local.IsPeer(c.RemoteAddr()) {
		n.work.Counters().CordonsRefusedNotLocal.Add(1)
		return frameserver.Refuse(wire.Refuse(wire.CodeNotAMember, "CORDON answers this machine only"))
	}
	action, err := wire.U8(req.Fields[0])
	if err != nil || action > 1 {
		return frameserver.Refuse(wire.Refuse(wire.CodeMalformedFrame, "CORDON action must be one byte: 00 lift or 01 cordon"))
	}
	state, inFlight := n.work.Uncordon()
	if action == 1 {
		state, inFlight = n.work.Cordon()
	}
	return frameserver.Ok(wire.AppendU32Field(wire.AppendU8Field(nil, uint8(state)), uint32(inFlight)))
}

func admissionPolicy(n *Node) string {
	return admission.Policy(n.roster().HasVoters(), n.fleetOpen())
}
