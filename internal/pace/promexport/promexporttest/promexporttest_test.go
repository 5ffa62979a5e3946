package promexporttest

import (
	"strings"
	"testing"
)

const exposition = `# HELP pace_x_total X.
# TYPE pace_x_total counter
pace_x_total{reason="a"} 2
pace_x_total{reason="b"} 3
# HELP pace_y Y.
# TYPE pace_y gauge
pace_y 7
`

func TestFindAndSumReadTheTextFormat(t *testing.T) {
	if v, err := Find(strings.NewReader(exposition), "pace_x_total", "reason", "b"); err != nil || v != 3 {
		t.Errorf("Find x{b} = %v, %v", v, err)
	}
	if v, err := Find(strings.NewReader(exposition), "pace_y"); err != nil || v != 7 {
		t.Errorf("Find y = %v, %v", v, err)
	}
	if _, err := Find(strings.NewReader(exposition), "pace_x_total"); err == nil {
		t.Error("Find found an unlabelled series of a labelled family")
	}
	if v, err := Sum(strings.NewReader(exposition), "pace_x_total"); err != nil || v != 5 {
		t.Errorf("Sum x = %v, %v", v, err)
	}
}
