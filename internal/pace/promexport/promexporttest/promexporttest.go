// Package promexporttest reads a pace daemon's /metrics in tests through the Prometheus text
// parser (prometheus/common/expfmt), so no test parses the exposition format by hand.
package promexporttest

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Value GETs url (a /metrics endpoint) and returns the value of the series name with exactly
// the labels given as name, value pairs; t fails when the series is not exposed.
func Value(t testing.TB, url, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	v, err := Find(resp.Body, name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Find parses an exposition in the text format and returns the value of the series name with
// exactly the labels given as name, value pairs.
func Find(r io.Reader, name string, labels ...string) (float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return 0, fmt.Errorf("parsing the exposition: %w", err)
	}
	fam, ok := families[name]
	if !ok {
		return 0, fmt.Errorf("series %s not exposed", name)
	}
	for _, m := range fam.GetMetric() {
		if hasLabels(m, labels) {
			return value(m), nil
		}
	}
	return 0, fmt.Errorf("series %s%v not exposed", name, labels)
}

// Sum parses an exposition in the text format and returns the total of every series of the
// family name, whatever their labels (0 when it is not exposed).
func Sum(r io.Reader, name string) (float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return 0, fmt.Errorf("parsing the exposition: %w", err)
	}
	total := 0.0
	for _, m := range families[name].GetMetric() {
		total += value(m)
	}
	return total, nil
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	if len(m.GetLabel())*2 != len(pairs) {
		return false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		want[pairs[i]] = pairs[i+1]
	}
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}
