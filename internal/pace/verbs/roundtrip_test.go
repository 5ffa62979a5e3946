package verbs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// splitRequest splits an appended request payload with the verb's arity
// from the opcode table, as the node's frame server does.
func splitRequest(t *rapid.T, op wire.Op, payload []byte) [][]byte {
	info, ok := wire.Lookup(op)
	if !ok {
		t.Fatalf("%s not in the opcode table", op)
	}
	fields, err := wire.SplitFields(nil, payload, info.Arity)
	if err != nil {
		t.Fatalf("%s: split %d-field payload: %v", op, info.Arity, err)
	}
	return fields
}

func checkRoundTrip[T any](t *rapid.T, want T, got T, err error) {
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if diff := cmp.Diff(want, got, diffOpts); diff != "" {
		t.Fatalf("round trip (-sent +parsed):\n%s", diff)
	}
}

func TestRoundTripLease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genLease(t)
		got, err := ParseLease(splitRequest(t, wire.OpLease, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripLeaseGrant(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := LeaseGrant{
			Endpoint:     genText(1, MaxEndpoint).Draw(t, "endpoint"),
			Token:        genText(1, MaxLeaseToken).Draw(t, "token"),
			WorkerCodecs: genCodecs(t, "codecs"),
			LifetimeMs:   rapid.Uint32().Draw(t, "lifetime"),
			DialHint:     genText(0, MaxEndpoint).Draw(t, "hint"),
			WorkerKey:    genKey(t, "workerKey"),
		}
		got, err := ParseLeaseGrant(g.Append(nil))
		checkRoundTrip(t, g, got, err)
	})
}

func TestRoundTripRelease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := ReleaseRequest{Token: genText(1, MaxLeaseToken).Draw(t, "token"), Key: genText(1, MaxKey).Draw(t, "key")}
		got, err := ParseRelease(splitRequest(t, wire.OpRelease, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripRegister(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := RegisterRequest{
			Fingerprint: genText(1, MaxFingerprint).Draw(t, "fingerprint"),
			Endpoint:    genEndpoint().Draw(t, "endpoint"),
			Slots:       rapid.Uint32().Draw(t, "slots"),
			Codecs:      genCodecs(t, "codecs"),
			Capacity:    genCapacity(t),
		}
		got, err := ParseRegister(splitRequest(t, wire.OpRegister, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripRegisterOk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := RegisterOk{WorkerID: genText(1, MaxID).Draw(t, "worker"), ClusterID: genText(1, MaxID).Draw(t, "cluster"),
			Epoch: rapid.Uint64().Draw(t, "epoch")}
		got, err := ParseRegisterOk(o.Append(nil))
		checkRoundTrip(t, o, got, err)
	})
}

func TestRoundTripHeartbeat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := HeartbeatRequest{WorkerID: genText(1, MaxID).Draw(t, "worker"), InFlight: rapid.Uint32().Draw(t, "inFlight"), Load: genLoad(t)}
		got, err := ParseHeartbeat(splitRequest(t, wire.OpHeartbeat, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripWithdraw(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := WithdrawRequest{WorkerID: genText(1, MaxID).Draw(t, "worker")}
		got, err := ParseWithdraw(splitRequest(t, wire.OpWithdraw, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripAnnounce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := AnnounceRequest{Endpoint: genEndpoint().Draw(t, "endpoint"), Capacity: genCapacity(t), Load: genLoad(t)}
		for i := range rapid.IntRange(0, MaxJoinMemos).Draw(t, "memos") {
			m := JoinMemo{ClusterID: genText(1, MaxID).Draw(t, "cluster")}
			m.Key[0] = byte(i)
			r.JoinMemos = append(r.JoinMemos, m)
		}
		got, err := ParseAnnounce(splitRequest(t, wire.OpNodeAnnounce, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripCompile(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genCompile(t)
		got, err := ParseCompile(splitRequest(t, wire.OpCompile, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripCompileReply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := CompileReply{
			ExitCode:    rapid.Uint32().Draw(t, "exit"),
			Object:      rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "object"),
			Stdout:      rapid.SliceOfN(rapid.Byte(), 0, 50).Draw(t, "stdout"),
			Stderr:      rapid.SliceOfN(rapid.Byte(), 0, 50).Draw(t, "stderr"),
			Correlation: rapid.StringMatching(`[0-9a-f]{32}`).Draw(t, "correlation"),
		}
		if rapid.Bool().Draw(t, "signed") {
			r.Signature = rapid.SliceOfN(rapid.Byte(), SignatureLen, SignatureLen).Draw(t, "sig")
		}
		got, err := ParseCompileReply(r.Append(nil))
		checkRoundTrip(t, r, got, err)
	})
}

func TestRoundTripMintTicket(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := MintTicketRequest{Audience: genEndpoint().Draw(t, "audience")}
		got, err := ParseMintTicket(splitRequest(t, wire.OpMintTicket, r.Append(nil)))
		checkRoundTrip(t, r, got, err)
		o := MintTicketOk{Ticket: rapid.SliceOfN(rapid.Byte(), 1, MaxTicket).Draw(t, "ticket")}
		gotOk, err := ParseMintTicketOk(o.Append(nil))
		checkRoundTrip(t, o, gotOk, err)
	})
}

func TestRoundTripNodeProof(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c NodeChallengeRequest
		copy(c.Nonce[:], rapid.SliceOfN(rapid.Byte(), NonceLen, NonceLen).Draw(t, "nonce"))
		copy(c.Ephemeral[:], rapid.SliceOfN(rapid.Byte(), KeyLen, KeyLen).Draw(t, "eph"))
		gotC, err := ParseNodeChallenge(splitRequest(t, wire.OpNodeChallenge, c.Append(nil)))
		checkRoundTrip(t, c, gotC, err)

		o := NodeChallengeOk{ServerID: genText(1, MaxID).Draw(t, "server"), Nonce: c.Ephemeral, Ephemeral: c.Nonce}
		copy(o.Signature[:], rapid.SliceOfN(rapid.Byte(), SignatureLen, SignatureLen).Draw(t, "sig"))
		gotO, err := ParseNodeChallengeOk(o.Append(nil))
		checkRoundTrip(t, o, gotO, err)

		p := ProveNodeRequest{NodeID: genText(1, MaxID).Draw(t, "node"), Key: c.Nonce, Signature: o.Signature}
		gotP, err := ParseProveNode(splitRequest(t, wire.OpProveNode, p.Append(nil)))
		checkRoundTrip(t, p, gotP, err)
	})
}

// TestArityMatchesOpTable: the arities here are the opcode table's.
func TestArityMatchesOpTable(t *testing.T) {
	for op, arity := range map[wire.Op]int{
		wire.OpLease: LeaseArity, wire.OpRelease: ReleaseArity, wire.OpRegister: RegisterArity,
		wire.OpHeartbeat: HeartbeatArity, wire.OpWithdraw: WithdrawArity, wire.OpNodeAnnounce: AnnounceArity,
		wire.OpCompile: CompileArity, wire.OpMintTicket: MintTicketArity,
		wire.OpNodeChallenge: NodeChallengeArity, wire.OpProveNode: ProveNodeArity,
		wire.OpEnroll: EnrollArity,
	} {
		if info, _ := wire.Lookup(op); info.Arity != arity {
			t.Errorf("%s: arity %d here, %d in the opcode table", op, arity, info.Arity)
		}
	}
}
