package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// troubleshooting are the counters the "When a leg is not flowing" table of pace-node's
// documentation tells an operator to read, symptom by symptom.
var troubleshooting = map[string][]string{
	"a worker never appears in the fleet": {"pace_scheduler_requests_refused_node_identity_required_total", "pace_node_proofs_refused_unknown_key_total"},
	"workers appear, vanish, reappear":    {"pace_dispatch_worker_registrations_total", "pace_dispatch_workers_expired_total"},
	"a lease granted, compiled locally":   {"pace_worker_jobs_refused_not_a_member_total"},
	"peers seen, never authenticated": {"pace_discovery_proofs_refused_unknown_key_total", "pace_discovery_beacons_heard_total",
		"pace_discovery_challenges_sent_total", "pace_discovery_proofs_received_total", "pace_discovery_peers_authenticated"},
	"a consensus member never joins":   {"pace_raft_peer_connections_refused_proof_total", "pace_raft_peer_dials_ended_by_acceptor_total"},
	"an address answers as another":    {"pace_raft_peer_dials_refused_wrong_target_total", "pace_raft_peer_connections_refused_wrong_target_total"},
	"two machines answer to one id":    {"pace_raft_peer_dials_refused_own_id_total", "pace_raft_peer_connections_refused_own_id_total"},
	"a peer from before the handshake": {"pace_raft_peer_dials_refused_timeout_total"},
	"a join that never completes": {"pace_formation_yields_total", "pace_formation_joins_total", "pace_formation_joins_abandoned_total",
		"pace_formation_admissions_unverified_total", "pace_enrollment_requests_refused_host_cap_total"},
}

// TestTheTroubleshootingCountersAreExposed: every counter the troubleshooting table names is on
// a running node's /metrics (with discovery on, here to a loopback target), so each symptom
// can be told apart from the counters alone.
func TestTheTroubleshootingCountersAreExposed(t *testing.T) {
	n := startNode(t, t.TempDir(), "--discovery=127.0.0.1:"+freePort(t))
	resp, err := http.Get("http://" + n.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	exposed := map[string]bool{}
	for line := range strings.Lines(string(body)) {
		if name, _, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			name, _, _ = strings.Cut(name, "{")
			exposed[name] = true
		}
	}
	for symptom, names := range troubleshooting {
		for _, name := range names {
			if !exposed[name] {
				t.Errorf("%s: %s is not on /metrics", symptom, name)
			}
		}
	}
}
