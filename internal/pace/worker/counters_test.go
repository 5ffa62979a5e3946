package worker

import (
	"strings"
	"testing"
)

// specWorkerCounters are the worker counters pace-node §10.6 names, each of
// which must be registered under exactly this name.
var specWorkerCounters = []string{
	"pace_worker_jobs_started_total", "pace_worker_jobs_completed_total", "pace_worker_compile_milliseconds_total",
	"pace_worker_jobs_abandoned_client_gone_total", "pace_worker_bytes_received_total", "pace_worker_bytes_returned_total",
	"pace_worker_jobs_refused_unknown_fingerprint_total", "pace_worker_jobs_refused_rejected_argument_total",
	"pace_worker_jobs_refused_scratch_unavailable_total", "pace_worker_jobs_refused_spawn_failed_total",
	"pace_worker_jobs_refused_compiler_unclassified_total", "pace_worker_jobs_refused_survey_in_flight_total",
	"pace_worker_jobs_refused_no_slot_total", "pace_worker_jobs_refused_not_a_member_total",
	"pace_worker_jobs_refused_endpoint_busy_total", "pace_worker_jobs_refused_stopping_total",
	"pace_worker_jobs_refused_cordoned_total", "pace_worker_cordons_refused_not_local_total",
	"pace_worker_jobs_refused_envelope_malformed_total", "pace_worker_jobs_refused_envelope_unsupported_codec_total",
	"pace_worker_jobs_refused_envelope_declared_too_large_total", "pace_worker_jobs_refused_envelope_corrupt_total",
	"pace_worker_jobs_refused_lease_unauthorized_total", "pace_worker_jobs_refused_lease_signer_revoked_total",
	"pace_worker_jobs_refused_lease_endpoint_mismatch_total", "pace_worker_jobs_refused_lease_expired_total",
	"pace_worker_jobs_refused_lease_no_roster_total", "pace_worker_jobs_refused_lease_isolated_total",
	"pace_worker_jobs_refused_lease_replayed_total", "pace_worker_jobs_refused_lease_wrong_cluster_total",
	"pace_worker_scheduler_term_regressions_total", "pace_worker_scratch_roots_reclaimed_total",
	"pace_worker_frames_refused_unsupported_version_total", "pace_worker_frames_refused_truncated_total",
	"pace_worker_frames_refused_unknown_opcode_total", "pace_worker_frames_refused_unimplemented_verb_total",
	"pace_worker_frames_refused_not_permitted_total", "pace_worker_frames_refused_malformed_payload_total",
	"pace_worker_frames_refused_payload_too_large_total",
}

func TestMetricsNameEveryCounterOnce(t *testing.T) {
	var c Counters
	seen := map[string]bool{}
	values := map[any]bool{}
	for _, m := range c.Metrics() {
		if seen[m.Name] || values[m.Value] {
			t.Errorf("%s registered twice or sharing a value", m.Name)
		}
		seen[m.Name], values[m.Value] = true, true
		if !strings.HasPrefix(m.Name, "pace_worker_") || !strings.HasSuffix(m.Name, "_total") || m.Help == "" || m.Value == nil {
			t.Errorf("metric %+v", m)
		}
	}
	for _, name := range specWorkerCounters {
		if !seen[name] {
			t.Errorf("%s is not registered", name)
		}
	}
}

func TestGaugesFollowTheWorker(t *testing.T) {
	f := newFixture(t, withSlots(3)).start()
	read := func() map[string]float64 {
		m := map[string]float64{}
		for _, g := range f.w.Gauges() {
			m[g.Name] = g.Read()
		}
		return m
	}
	if g := read(); g["pace_node_cordoned"] != 0 || g["pace_node_slots_configured"] != 3 || g["pace_node_slots_busy"] != 0 {
		t.Fatalf("gauges %v", g)
	}
	f.w.Cordon()
	if g := read(); g["pace_node_cordoned"] != 1 {
		t.Fatalf("gauges %v", g)
	}
}
