package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func split(t *testing.T, op wire.Op, payload []byte) [][]byte {
	t.Helper()
	info, _ := wire.Lookup(op)
	fields, err := wire.SplitFields(nil, payload, info.Arity)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

// TestServeRoundTrip drives the verbs as the node does: fields in, Ok
// payload out, parsed back with the client-side parsers.
func TestServeRoundTrip(t *testing.T) {
	f := newFixture(t)
	node := caller("a", "10.0.0.1")
	reg := verbs.RegisterRequest{Fingerprint: fp, Endpoint: "10.0.0.1:6674", Slots: 2}
	body, err := f.s.Serve(nil, wire.OpRegister, split(t, wire.OpRegister, reg.Append(nil)), node, params)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := verbs.ParseRegisterOk(body)
	if err != nil || ok.ClusterID != "cluster-a" || ok.Epoch != 7 || ok.WorkerID == "" {
		t.Fatalf("register ok %+v, %v", ok, err)
	}
	hb := verbs.HeartbeatRequest{WorkerID: ok.WorkerID, InFlight: 0}
	if body, err = f.s.Serve(nil, wire.OpHeartbeat, split(t, wire.OpHeartbeat, hb.Append(nil)), node, params); err != nil || len(body) != 0 {
		t.Fatalf("heartbeat: %q, %v", body, err)
	}
	client := Caller{}
	lease := verbs.LeaseRequest{Fingerprint: fp, Key: "k"}
	body, err = f.s.Serve(nil, wire.OpLease, split(t, wire.OpLease, lease.Append(nil)), client, params)
	if err != nil {
		t.Fatal(err)
	}
	grant, err := verbs.ParseLeaseGrant(body)
	if err != nil || grant.Endpoint != "10.0.0.1:6674" {
		t.Fatalf("grant %+v, %v", grant, err)
	}
	rel := verbs.ReleaseRequest{Token: grant.Token, Key: "k"}
	if _, err = f.s.Serve(nil, wire.OpRelease, split(t, wire.OpRelease, rel.Append(nil)), client, params); err != nil {
		t.Fatal(err)
	}
	wd := verbs.WithdrawRequest{WorkerID: ok.WorkerID}
	if _, err = f.s.Serve(nil, wire.OpWithdraw, split(t, wire.OpWithdraw, wd.Append(nil)), node, params); err != nil {
		t.Fatal(err)
	}
	if _, err = f.s.Serve(nil, wire.OpFetch, [][]byte{[]byte("k")}, client, params); !errors.Is(err, ErrNotScheduler) {
		t.Fatalf("FETCH: %v", err)
	}
}

// TestServeCountsRefusedBodies: malformed and over-long requests each land in
// their family's counter (pace-node §6.1, pace-node §6.2, pace-node §10.6).
func TestServeCountsRefusedBodies(t *testing.T) {
	node := caller("a", "10.0.0.1")
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name    string
		op      wire.Op
		payload []byte
		caller  Caller
		code    wire.Code
		counter string
	}{
		{"LEASE fingerprint not UTF-8", wire.OpLease, verbs.LeaseRequest{Fingerprint: "\xff", Key: "k"}.Append(nil), Caller{},
			wire.CodeMalformedFrame, "pace_dispatch_leases_malformed_total"},
		{"LEASE key too long", wire.OpLease, verbs.LeaseRequest{Fingerprint: fp, Key: long}.Append(nil), Caller{},
			wire.CodeMalformedFrame, "pace_dispatch_leases_field_too_long_total"},
		{"RELEASE empty token", wire.OpRelease, verbs.ReleaseRequest{Key: "k"}.Append(nil), Caller{},
			wire.CodeMalformedFrame, "pace_dispatch_leases_malformed_total"},
		{"REGISTER endpoint not UTF-8", wire.OpRegister, verbs.RegisterRequest{Fingerprint: fp, Endpoint: "h\xff:1"}.Append(nil), node,
			wire.CodeMalformedRegistration, "pace_dispatch_worker_registrations_malformed_total"},
		{"REGISTER endpoint too long", wire.OpRegister, verbs.RegisterRequest{Fingerprint: fp, Endpoint: long + ":1"}.Append(nil), node,
			wire.CodeMalformedRegistration, "pace_dispatch_worker_registrations_field_too_long_total"},
		{"HEARTBEAT id too long", wire.OpHeartbeat, verbs.HeartbeatRequest{WorkerID: long}.Append(nil), node,
			wire.CodeMalformedFrame, "pace_dispatch_worker_registrations_field_too_long_total"},
		{"NODE-ANNOUNCE endpoint too long", wire.OpNodeAnnounce, verbs.AnnounceRequest{Endpoint: long + ":1"}.Append(nil), node,
			wire.CodeMalformedFrame, "pace_dispatch_node_announcements_field_too_long_total"},
		{"REGISTER unproven, loopback included", wire.OpRegister, verbs.RegisterRequest{Fingerprint: fp, Endpoint: "127.0.0.1:6674"}.Append(nil),
			Caller{Addr: caller("x", "127.0.0.1").Addr}, wire.CodeNodeIdentityRequired, "pace_scheduler_requests_refused_node_identity_required_total"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			before := counterValues(f)
			_, err := f.s.Serve(nil, tc.op, split(t, tc.op, tc.payload), tc.caller, params)
			r, ok := RefusalOf(err)
			if !ok || r.Code != tc.code {
				t.Fatalf("got %v (%+v), want %s", err, r, tc.code)
			}
			assertOnlyCounter(t, before, counterValues(f), tc.counter)
		})
	}
}

func TestSnapshot(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.HeartbeatTimeout = time.Hour
	a := f.register("a", "10.0.0.1", fp, 4)
	f.register("a", "10.0.0.1", "clang", 4)
	f.heartbeat("a", "10.0.0.1", a, 0, verbs.Load{CompileBudgetFull: true})
	f.register("b", "10.0.0.2", fp, 2)
	for i := range SnapshotLeases + 5 {
		f.clock.Advance(time.Second)
		f.register("b", "10.0.0.2", fp, 1000)
		f.mustLease(fp, "k"+strings.Repeat("x", i))
	}
	_, _ = f.lease("rustc", "k-unserved")
	f.clock.Advance(time.Second)
	snap := f.s.Snapshot()
	if len(snap.Workers) != 3 || len(snap.Machines) != 2 || snap.LeasesOutstanding != SnapshotLeases+5 {
		t.Fatalf("workers %d machines %d leases %d", len(snap.Workers), len(snap.Machines), snap.LeasesOutstanding)
	}
	if len(snap.Leases) != SnapshotLeases || snap.Leases[0].Key != "k" || snap.Leases[0].Age != time.Duration(SnapshotLeases+5)*time.Second ||
		snap.Leases[0].Age < snap.Leases[1].Age {
		t.Fatalf("leases not the 50 oldest, oldest first: first %+v", snap.Leases[0])
	}
	if w := snap.Workers[1]; w.Endpoint != "10.0.0.1:6674" || w.LimitedBy != "compile-budget" || w.Offerable != 0 {
		t.Fatalf("worker row %+v", w)
	}
	if m := snap.Machines[0]; m.NodeID != "a" || m.Registrations != 2 {
		t.Fatalf("machine row %+v", m)
	}
	if len(snap.Unserved) != 1 || snap.Unserved[0].Fingerprint != "rustc" {
		t.Fatalf("unserved %+v", snap.Unserved)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{{ClusterID: "c"}, {Signer: trivialSigner{}}, {Signer: trivialSigner{}, ClusterID: strings.Repeat("c", 65)}} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v", cfg, err)
		}
	}
}

// TestCountersHaveExactNames: every pace-node §10.6 dispatch/scheduler name,
// once.
func TestCountersHaveExactNames(t *testing.T) {
	var c Counters
	seen := map[string]bool{}
	for _, m := range c.Metrics() {
		if seen[m.Name] || !strings.HasSuffix(m.Name, "_total") || m.Value == nil || m.Help == "" {
			t.Errorf("counter %q duplicated, unnamed or unbound", m.Name)
		}
		seen[m.Name] = true
	}
	for _, suffix := range []string{"granted", "released", "no_worker", "no_capacity", "withdrawn", "all_excluded",
		"duplicate", "reclaimed", "unauthorized", "released_late", "malformed", "field_too_long"} {
		if !seen["pace_dispatch_leases_"+suffix+"_total"] {
			t.Errorf("missing pace_dispatch_leases_%s_total", suffix)
		}
	}
	if len(seen) != 25 {
		t.Errorf("%d counters, want the 25 of pace-node §10.6", len(seen))
	}
}
