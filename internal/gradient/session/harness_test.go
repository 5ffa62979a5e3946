package session_test

import (
	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Generators for the property tests: one harness per role, cooperative replies, and the
// events a careful or careless driver steps a role with.

// harness describes one role to the generic properties below.
type harness[S session.Role[S]] struct {
	start   func(t *rapid.T) (S, session.Output)
	inbound func(t *rapid.T) wire.Message // any message from the other side
	focused func(t *rapid.T) wire.Message // a message the handshake or reauth reads
	// reply is what a cooperative other side sends after the role's last message (nil:
	// nothing sent yet), so runs reach deep states before they go astray.
	reply    func(t *rapid.T, last wire.Message) wire.Message
	outbound func(wire.Message) bool // whether the role may send this
	triggers []session.Event         // triggers of this role
	foreign  []session.Event         // triggers of the other roles
	reject   wire.Message            // the other side's Reject
	// handshakeMsgs is how many messages a role consumes at most while it is neither running
	// nor ended: the handshake cannot go on for ever.
	handshakeMsgs int
}

func isClient(m wire.Message) bool { _, ok := m.(wire.ClientMessage); return ok }
func isServer(m wire.Message) bool { _, ok := m.(wire.ServerMessage); return ok }

var (
	serverTriggers = []session.Event{session.ServerReauth{}}
	workerTriggers = []session.Event{session.PeersChanged{Tokens: session.NewPeerTokens([]wire.PeerToken{tok("proj-a", "ta"), tok("*", "tb")})}}
)

func authorityHarness() harness[session.Authority] {
	return harness[session.Authority]{
		start: func(t *rapid.T) (session.Authority, session.Output) {
			return session.NewAuthority(session.AuthorityConfig{AcceptInbound: rapid.IntRange(0, 7).Draw(t, "inbound") > 0, Federate: rapid.Bool().Draw(t, "federate")})
		},
		inbound:  func(t *rapid.T) wire.Message { return drawClientMessage(t) },
		focused:  func(t *rapid.T) wire.Message { return drawHandshakeClientMessage(t) },
		reply:    workerReply,
		outbound: isServer, triggers: serverTriggers, foreign: workerTriggers,
		reject: clientReject(400, "bye"), handshakeMsgs: 2,
	}
}

func dialerHarness() harness[session.Dialer] {
	return harness[session.Dialer]{
		start: func(t *rapid.T) (session.Dialer, session.Output) {
			return session.NewDialer(session.DialerConfig{WorkerID: workerID, Tokens: drawTokens(t, "dial tokens"), Federate: rapid.Bool().Draw(t, "federate")})
		},
		inbound:  func(t *rapid.T) wire.Message { return drawClientMessage(t) },
		focused:  func(t *rapid.T) wire.Message { return drawHandshakeClientMessage(t) },
		reply:    workerReply,
		outbound: isServer, triggers: serverTriggers, foreign: workerTriggers,
		reject: clientReject(401, "unknown worker id or wrong token"), handshakeMsgs: 1,
	}
}

func peerHarness() harness[session.Peer] {
	return harness[session.Peer]{
		start: func(t *rapid.T) (session.Peer, session.Output) {
			return session.NewPeer(session.PeerConfig{WorkerID: workerID, Capabilities: drawCaps(t), Tokens: session.NewPeerTokens(drawTokens(t, "peers file"))})
		},
		inbound:  func(t *rapid.T) wire.Message { return drawServerMessage(t) },
		focused:  func(t *rapid.T) wire.Message { return drawHandshakeServerMessage(t) },
		reply:    serverReply,
		outbound: isClient, triggers: workerTriggers, foreign: serverTriggers,
		reject: serverReject(403, "worker is deactivated"), handshakeMsgs: 1,
	}
}

func dialedHarness() harness[session.Dialed] {
	return harness[session.Dialed]{
		start: func(t *rapid.T) (session.Dialed, session.Output) {
			return session.NewDialed(session.DialedConfig{WorkerID: workerID, Capabilities: drawCaps(t)})
		},
		inbound:  func(t *rapid.T) wire.Message { return drawServerMessage(t) },
		focused:  func(t *rapid.T) wire.Message { return drawHandshakeServerMessage(t) },
		reply:    serverReply,
		outbound: isClient, triggers: workerTriggers, foreign: serverTriggers,
		reject: serverReject(496, "worker already connected"), handshakeMsgs: 1,
	}
}

// workerReply answers a server role like a cooperative worker: InitConnection first, an
// AuthResponse for whatever was challenged (tokens that mostly verify), ReauthRequest later.
func workerReply(t *rapid.T, last wire.Message) wire.Message {
	switch m := last.(type) {
	case nil, *wire.Authenticate:
		return &wire.InitConnection{Capabilities: drawCaps(t), ID: workerID}
	case *wire.AuthChallenge:
		var tokens []wire.PeerToken
		for _, p := range m.Peers {
			tokens = append(tokens, tok(p, rapid.SampledFrom(tokenPool).Draw(t, "token")))
		}
		return &wire.AuthResponse{Tokens: tokens}
	}
	return &wire.ReauthRequest{}
}

// serverReply answers a worker role like a cooperative server: Authenticate first (a dialed
// worker) or a challenge, InitAck after the answer, reauth challenges and updates later.
func serverReply(t *rapid.T, last wire.Message) wire.Message {
	switch last.(type) {
	case nil:
		return &wire.Authenticate{WorkerID: workerID, Tokens: drawTokens(t, "tokens")}
	case *wire.InitConnection:
		if rapid.Bool().Draw(t, "challenge") {
			return &wire.AuthChallenge{Peers: drawPeers(t, "challenge")}
		}
		return fillServerMessage(t, &wire.InitAck{})
	case *wire.AuthResponse:
		return fillServerMessage(t, rapid.SampledFrom([]wire.ServerMessage{&wire.InitAck{}, &wire.AuthUpdate{}}).Draw(t, "after response"))
	}
	return fillServerMessage(t, rapid.SampledFrom([]wire.ServerMessage{&wire.AuthChallenge{}, &wire.AuthUpdate{}}).Draw(t, "running"))
}

// drawEvent draws the next event. A careful driver answers every pending need and sends only
// messages of the other side's direction; a careless one (half of the runs) sometimes does
// not, which must end the role with a fault and never panic.
func drawEvent[S session.Role[S]](t *rapid.T, h harness[S], o *observer, careless bool) session.Event {
	pending := o.pending
	if pending != nil && (!careless || rapid.IntRange(0, 9).Draw(t, "obey") > 0) {
		return drawAnswer(t, pending)
	}
	if careless && rapid.IntRange(0, 9).Draw(t, "misbehave") == 0 {
		return drawMistake(t, h)
	}
	switch rapid.IntRange(0, 9).Draw(t, "event kind") {
	case 0:
		return rapid.SampledFrom(h.triggers).Draw(t, "trigger")
	case 1, 2:
		return session.Received{Msg: h.inbound(t)}
	case 3, 4:
		return session.Received{Msg: h.focused(t)}
	}
	return session.Received{Msg: h.reply(t, o.lastSent)}
}

// drawMistake is a driver bug: a nil or wrong-way message, another role's trigger, or an
// answer nobody asked for.
func drawMistake[S session.Role[S]](t *rapid.T, h harness[S]) session.Event {
	switch rapid.IntRange(0, 3).Draw(t, "mistake") {
	case 0:
		return session.Received{Msg: nil}
	case 1:
		return rapid.SampledFrom(h.foreign).Draw(t, "foreign trigger")
	case 2:
		if isClient(h.reject) {
			return session.Received{Msg: drawServerMessage(t)}
		}
		return session.Received{Msg: drawClientMessage(t)}
	}
	return drawAnswer(t, rapid.SampledFrom([]session.Need{session.LookupWorker{}, session.VerifyTokens{}, session.ClaimSession{}}).Draw(t, "unasked"))
}

func drawAnswer(t *rapid.T, n session.Need) session.Event {
	switch n := n.(type) {
	case session.LookupWorker:
		return session.FactsAnswer{Facts: drawFacts(t)}
	case session.VerifyTokens:
		var ok []string
		for _, tk := range n.Tokens {
			if rapid.IntRange(0, 3).Draw(t, "verifies") > 0 {
				ok = append(ok, tk.PeerID)
			}
		}
		return session.TokensAnswer{Valid: append(ok, drawPeers(t, "stray valid")...)}
	case session.ClaimSession:
		return session.ClaimAnswer{Claimed: rapid.IntRange(0, 5).Draw(t, "claim") > 0}
	}
	t.Fatalf("no answer for %T", n)
	return nil
}

// drawFacts draws what a server knows: half the time a healthy worker (active registrations,
// projects with caches), otherwise anything, including team workers.
func drawFacts(t *rapid.T) session.WorkerFacts {
	healthy := rapid.Bool().Draw(t, "healthy")
	if !healthy && rapid.IntRange(0, 2).Draw(t, "team?") == 0 {
		team := &session.TeamWorker{TeamID: "team-1", Enabled: rapid.IntRange(0, 4).Draw(t, "enabled") > 0}
		for _, p := range rapid.SliceOfN(rapid.SampledFrom([]string{"proj-a", "proj-b"}), 0, 3).Draw(t, "grants") {
			team.Grants = append(team.Grants, session.Grant{ProjectID: p, HasCache: rapid.Bool().Draw(t, "grant cache")})
		}
		return session.WorkerFacts{Team: team}
	}
	var f session.WorkerFacts
	for range rapid.IntRange(0, 4).Draw(t, "registrations") {
		b := rapid.SliceOfN(rapid.Bool(), 6, 6).Draw(t, "flags")
		f.Registrations = append(f.Registrations, session.Registration{
			PeerID: rapid.SampledFrom(peerPool[:4]).Draw(t, "peer"),
			Kind:   rapid.SampledFrom([]session.PeerKind{session.PeerProject, session.PeerCache, session.PeerProxy}).Draw(t, "kind"),
			Active: healthy || rapid.IntRange(0, 4).Draw(t, "active") > 0, HasCache: healthy || b[0], HasDialToken: b[1],
			EnableFetch: b[2], EnableEval: b[3], EnableBuild: b[4] || b[5],
		})
	}
	return f
}
