package session_test

import (
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Every ClientMessage and ServerMessage variant of protocol 30, in wire order, as encodable
// values (nested enums filled with their first variant). TestVariantCatalogueIsComplete pins
// the lists to the codec, so a variant added to wire fails here until the properties cover it.
func clientVariants() []wire.ClientMessage {
	return []wire.ClientMessage{
		&wire.InitConnection{}, &wire.AuthResponse{}, &wire.ReauthRequest{}, &wire.ClientReject{},
		&wire.WorkerCapabilities{}, &wire.WorkerMetrics{}, &wire.RequestJobList{}, &wire.RequestJobChunk{},
		&wire.AssignJobResponse{}, &wire.JobUpdate{Update: &wire.JobUpdateFetching{}}, &wire.JobCompleted{},
		&wire.JobFailed{}, &wire.ClientDraining{}, &wire.BuildProgress{},
		&wire.EvalProgress{Progress: &wire.EvalProgressEvaluating{}}, &wire.LogChunk{}, &wire.NarRequest{},
		&wire.NarRequestResume{}, &wire.EvalCachePull{}, &wire.RequestJob{}, &wire.ClientClusterSignal{},
		&wire.CacheQuery{}, &wire.EvalMessage{}, &wire.QueryKnownDerivations{},
		&wire.UploadRequest{Object: &wire.UploadObjectNar{}}, &wire.UploadChunk{},
		&wire.UploadFinished{Metadata: &wire.UploadMetadataEvalCache{}}, &wire.UploadCancel{}, &wire.HandoverDone{},
	}
}

func serverVariants() []wire.ServerMessage {
	return []wire.ServerMessage{
		&wire.AuthChallenge{}, &wire.InitAck{}, &wire.AuthUpdate{}, &wire.ServerReject{}, &wire.ServerError{},
		&wire.ServerDraining{}, &wire.JobListChunk{}, &wire.JobOffer{}, &wire.AssignJob{Job: &wire.BuildJob{}},
		&wire.AbortJob{}, &wire.StartCluster{}, &wire.ServerClusterSignal{}, &wire.AbortCluster{}, &wire.Credential{},
		&wire.NarPush{}, &wire.NarUnavailable{}, &wire.NarAbort{}, &wire.NarStreamHeader{},
		&wire.EvalCachePullResult{Outcome: &wire.EvalCachePullOutcomeMiss{}}, &wire.EvalCacheChunk{},
		&wire.CacheStatus{}, &wire.KnownDerivations{}, &wire.CacheError{},
		&wire.UploadGrant{Target: &wire.GrantTargetSkip{}}, &wire.UploadCommitted{Outcome: &wire.UploadOutcomeOk{}},
		&wire.Authenticate{}, &wire.Handover{},
	}
}

var v30 = wire.ProtoVersions().Newest

func TestVariantCatalogueIsComplete(t *testing.T) {
	check := func(t *testing.T, variants []wire.Message, decode func([]byte) (wire.Message, error)) {
		for i, m := range variants {
			frame, err := wire.Encode(m, v30)
			if err != nil {
				t.Fatalf("variant %d %T: %v", i, m, err)
			}
			if frame[0] != byte(i) {
				t.Fatalf("%T encodes as variant %d, listed at %d", m, frame[0], i)
			}
			back, err := decode(frame)
			if err != nil || reflect.TypeOf(back) != reflect.TypeOf(m) {
				t.Fatalf("variant %d %T decodes as %T, %v", i, m, back, err)
			}
		}
		var unknown wire.UnknownVariantError
		if _, err := decode([]byte{byte(len(variants))}); !errors.As(err, &unknown) {
			t.Fatalf("variant %d should not exist at v%d: %v", len(variants), v30, err)
		}
	}
	t.Run("ClientMessage", func(t *testing.T) {
		check(t, asMessages(clientVariants()), func(b []byte) (wire.Message, error) { return wire.DecodeClientMessage(b, v30) })
	})
	t.Run("ServerMessage", func(t *testing.T) {
		check(t, asMessages(serverVariants()), func(b []byte) (wire.Message, error) { return wire.DecodeServerMessage(b, v30) })
	})
}

func asMessages[M wire.Message](ms []M) []wire.Message {
	out := make([]wire.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// Small pools make matches likely: the right worker ID, a challenged peer, a valid token.
var (
	idPool    = []string{workerID, otherID, ""}
	peerPool  = []string{"proj-a", "proj-b", "cache-1", "proxy-1", "team-1", "*"}
	tokenPool = []string{"ta", "tb", "bad", ""}
	codePool  = []uint16{400, 401, 403, 495, 496, 0, 65535}
)

func drawPeers(t *rapid.T, label string) []string {
	return rapid.SliceOfN(rapid.SampledFrom(peerPool), 0, 5).Draw(t, label)
}

func drawTokens(t *rapid.T, label string) []wire.PeerToken {
	n := rapid.IntRange(0, 5).Draw(t, label)
	out := make([]wire.PeerToken, n)
	for i := range out {
		out[i] = wire.PeerToken{PeerID: rapid.SampledFrom(peerPool).Draw(t, "peer"), Token: rapid.SampledFrom(tokenPool).Draw(t, "token")}
	}
	return out
}

func drawFailed(t *rapid.T) []wire.FailedPeer {
	var out []wire.FailedPeer
	for _, p := range drawPeers(t, "failed") {
		out = append(out, wire.FailedPeer{PeerID: p, Reason: "invalid token"})
	}
	return out
}

func drawCaps(t *rapid.T) wire.GradientCapabilities {
	b := rapid.SliceOfN(rapid.Bool(), 6, 6).Draw(t, "caps")
	return wire.GradientCapabilities{Core: b[0], Federate: b[1], Fetch: b[2], Eval: b[3], Build: b[4], Cache: b[5]}
}

// drawClientMessage draws any ClientMessage variant; the ones the handshake reads get drawn
// contents, the rest their catalogue value (their contents never reach a session decision).
func drawClientMessage(t *rapid.T) wire.ClientMessage {
	variants := clientVariants()
	return fillClientMessage(t, variants[rapid.IntRange(0, len(variants)-1).Draw(t, "client variant")])
}

func fillClientMessage(t *rapid.T, m wire.ClientMessage) wire.ClientMessage {
	switch m := m.(type) {
	case *wire.InitConnection:
		return &wire.InitConnection{Capabilities: drawCaps(t), ID: rapid.SampledFrom(idPool).Draw(t, "id")}
	case *wire.AuthResponse:
		return &wire.AuthResponse{Tokens: drawTokens(t, "tokens")}
	case *wire.ClientReject:
		return &wire.ClientReject{Code: rapid.SampledFrom(codePool).Draw(t, "code"), Reason: rapid.String().Draw(t, "reason")}
	default:
		return m
	}
}

func drawServerMessage(t *rapid.T) wire.ServerMessage {
	variants := serverVariants()
	return fillServerMessage(t, variants[rapid.IntRange(0, len(variants)-1).Draw(t, "server variant")])
}

// drawHandshakeClientMessage draws among the messages a server role's handshake and reauth
// read, weighted so that deep states are reached: a Reject ends everything, so it is rare.
func drawHandshakeClientMessage(t *rapid.T) wire.ClientMessage {
	return fillClientMessage(t, rapid.SampledFrom([]wire.ClientMessage{
		&wire.InitConnection{}, &wire.InitConnection{}, &wire.InitConnection{},
		&wire.AuthResponse{}, &wire.AuthResponse{}, &wire.AuthResponse{},
		&wire.ReauthRequest{}, &wire.ReauthRequest{}, &wire.ClientReject{},
	}).Draw(t, "handshake client message"))
}

func drawHandshakeServerMessage(t *rapid.T) wire.ServerMessage {
	return fillServerMessage(t, rapid.SampledFrom([]wire.ServerMessage{
		&wire.AuthChallenge{}, &wire.AuthChallenge{}, &wire.AuthChallenge{},
		&wire.InitAck{}, &wire.InitAck{}, &wire.InitAck{},
		&wire.Authenticate{}, &wire.Authenticate{}, &wire.Authenticate{},
		&wire.AuthUpdate{}, &wire.AuthUpdate{}, &wire.ServerReject{}, &wire.ServerError{}, &wire.ServerDraining{},
	}).Draw(t, "handshake server message"))
}

func fillServerMessage(t *rapid.T, m wire.ServerMessage) wire.ServerMessage {
	switch m := m.(type) {
	case *wire.AuthChallenge:
		return &wire.AuthChallenge{Peers: drawPeers(t, "challenge")}
	case *wire.InitAck:
		return &wire.InitAck{Capabilities: drawCaps(t), AuthorizedPeers: drawPeers(t, "authorized"), FailedPeers: drawFailed(t)}
	case *wire.AuthUpdate:
		return &wire.AuthUpdate{AuthorizedPeers: drawPeers(t, "authorized"), FailedPeers: drawFailed(t)}
	case *wire.ServerReject:
		return &wire.ServerReject{Code: rapid.SampledFrom(codePool).Draw(t, "code"), Reason: rapid.String().Draw(t, "reason")}
	case *wire.ServerError:
		return &wire.ServerError{Code: rapid.SampledFrom(codePool).Draw(t, "code"), Message: rapid.String().Draw(t, "message")}
	case *wire.Authenticate:
		return &wire.Authenticate{WorkerID: rapid.SampledFrom(idPool).Draw(t, "worker id"), Tokens: drawTokens(t, "tokens")}
	default:
		return m
	}
}
