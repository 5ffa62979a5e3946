package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// ask sends one request on a fresh connection and returns the terminal reply.
func ask(t *testing.T, addr string, op wire.Op, payload []byte) (wire.Status, []byte, error) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	req := wire.AppendRequestHeader(nil, wire.NewRequestHeader(op, uint32(len(payload))))
	nc.Write(append(req, payload...))
	return wire.ReadReply(bufio.NewReader(nc), op, wire.DefaultSessionCap, nil)
}

func refusedWith(t *testing.T, err error, code wire.Code) wire.Refusal {
	t.Helper()
	var r wire.Refusal
	if !errors.As(err, &r) || r.Code != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
	return r
}

func gccFingerprint(t *testing.T) string {
	t.Helper()
	path, _ := exec.LookPath("gcc")
	id, err := toolchain.Identify(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	fp, err := toolchain.Fingerprint(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// compileWith sends a COMPILE of a tiny preprocessed TU under token with args.
func compileWith(t *testing.T, addr, token, fp string, args []string, source []byte) error {
	t.Helper()
	if source == nil {
		env, _ := wire.Seal(nil, wire.CodecIdentity, []byte("int f(void) { return 1; }\n"))
		source = env
	}
	req := verbs.CompileRequest{LeaseToken: token, Fingerprint: fp, Args: args, Source: source,
		Codecs: wire.NewCodecList(wire.CodecZstd), SourceName: "f.c"}
	_, _, err := ask(t, addr, wire.OpCompile, req.Append(nil))
	return err
}

// TestRefusalsThroughARealNode drives the node port with what a misbehaving or hostile client
// sends; each refusal is answered with its code and counted on the node's /metrics.
func TestRefusalsThroughARealNode(t *testing.T) {
	state := t.TempDir()
	n := startNode(t, state)
	waitFor(t, "the worker's registration", registered(n))
	fp := gccFingerprint(t)
	cpp := []string{"-O2", "-x", "cpp-output"}

	// REGISTER on an unproven connection, loopback included.
	reg := verbs.RegisterRequest{Fingerprint: fp, Endpoint: "127.0.0.1:1", Slots: 1}
	_, _, err := ask(t, n.addr, wire.OpRegister, reg.Append(nil))
	refusedWith(t, err, wire.CodeNodeIdentityRequired)
	if n.metric("pace_scheduler_requests_refused_node_identity_required_total") != 1 {
		t.Fatal("unproven REGISTER not counted")
	}

	grant := func(key string) verbs.LeaseGrant {
		t.Helper()
		_, body, err := ask(t, n.addr, wire.OpLease, verbs.LeaseRequest{Fingerprint: fp, Key: key}.Append(nil))
		if err != nil {
			t.Fatalf("LEASE: %v", err)
		}
		g, err := verbs.ParseLeaseGrant(body)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	release := func(g verbs.LeaseGrant, key string) {
		ask(t, n.addr, wire.OpRelease, verbs.ReleaseRequest{Token: g.Token, Key: key}.Append(nil))
	}

	// A real grant, spent once, then replayed.
	g := grant("k-replay")
	if err := compileWith(t, n.addr, g.Token, fp, cpp, nil); err != nil {
		t.Fatalf("the genuine compile: %v", err)
	}
	refusedWith(t, compileWith(t, n.addr, g.Token, fp, cpp, nil), wire.CodeLeaseUnauthorized)
	release(g, "k-replay")

	// A forged token: one byte of the signature changed.
	g = grant("k-forged")
	forged := []byte(g.Token)
	forged[len(forged)-3] ^= 1
	refusedWith(t, compileWith(t, n.addr, string(forged), fp, cpp, nil), wire.CodeLeaseUnauthorized)
	release(g, "k-forged")

	// Tokens the node's own key signed for another endpoint, and long expired.
	id, err := identity.Load(state, identity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cluster := between(n.log.String(), "cluster=", " ")
	issue := func(endpoint string, expires time.Time) string {
		tok, err := lease.Issue(lease.Claims{Serial: 9000, Endpoint: endpoint, Fingerprint: fp, Key: "k",
			ExpiresAt: expires, ClusterID: cluster, Epoch: 2, SignerID: id.NodeID}, id.Key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	refusedWith(t, compileWith(t, n.addr, issue("10.9.9.9:6674", time.Now().Add(time.Minute)), fp, cpp, nil), wire.CodeLeaseEndpointMismatch)
	refusedWith(t, compileWith(t, n.addr, issue(g.Endpoint, time.Now().Add(-time.Hour)), fp, cpp, nil), wire.CodeLeaseExpired)

	// Arguments that would run code or write elsewhere.
	for i, bad := range [][]string{{"-fplugin=x.so"}, {"-wrapper", "sh,-c"}, {"-B/tmp"}, {"-specs=x"}, {"-Xclang", "-load"}} {
		key := "k-arg-" + string(rune('a'+i))
		g := grant(key)
		r := refusedWith(t, compileWith(t, n.addr, g.Token, fp, append(bad, cpp...), nil), wire.CodeWorkerRejectedArgument)
		if !strings.Contains(r.Message, bad[0]) {
			t.Errorf("refusal does not name %s: %q", bad[0], r.Message)
		}
		release(g, key)
	}

	// A 4 GiB declaration in a 30-byte envelope.
	g = grant("k-huge")
	huge := []byte{byte(wire.CodecZstd), 0xff, 0xff, 0xff, 0xff, 1, 2, 3}
	refusedWith(t, compileWith(t, n.addr, g.Token, fp, cpp, huge), wire.CodePayloadTooLarge)
	release(g, "k-huge")

	for series, want := range map[string]float64{
		"pace_worker_jobs_refused_lease_replayed_total":              1,
		"pace_worker_jobs_refused_lease_unauthorized_total":          1,
		"pace_worker_jobs_refused_lease_endpoint_mismatch_total":     1,
		"pace_worker_jobs_refused_lease_expired_total":               1,
		"pace_worker_jobs_refused_rejected_argument_total":           5,
		"pace_worker_jobs_refused_envelope_declared_too_large_total": 1,
	} {
		if got := n.metric(series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
