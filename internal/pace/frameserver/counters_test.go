package frameserver

import "testing"

func TestCountersNameEveryEvent(t *testing.T) {
	var c Counters
	c.ConnAccepted()
	c.ConnRejected(RejectedAtCapacity)
	c.ConnRejected(RejectedPerAddress)
	c.ConnRejected(RejectedPerAddress)
	c.ConnClosed(ClosedDisplaced)
	c.Refused(RefusedEndpointBusy)
	got := map[string]float64{}
	for _, m := range c.Metrics("p") {
		if m.Value != nil {
			got[m.Name] = float64(m.Value.Load())
			continue
		}
		for _, s := range m.Samples() {
			got[m.Name+"/"+s.LabelValues[0]] = s.Value
		}
	}
	want := map[string]float64{
		"p_connections_total": 1, "p_connections_refused_at_capacity_total": 1,
		"p_connections_refused_per_address_total": 2, "p_connections_closed_total/displaced": 1,
		"p_connections_closed_total/stalled": 0, "p_frames_refused_total/endpoint_busy": 1,
		"p_frames_refused_total/bad_magic": 0,
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
	if len(got) != 3+len(CloseReasons)+len(RefusalKinds) { // three unlabelled series, then the families
		t.Errorf("%d series, want every close reason and refusal kind rendered: %v", len(got), got)
	}
}
