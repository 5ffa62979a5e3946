package node

import (
	"errors"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

func TestLoadSamplerReadsTheHostsBusyShareBetweenHeartbeats(t *testing.T) {
	stats := []string{
		"cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n", // busy 200 of 1000
		"cpu  400 0 100 1000 100 0 0 0 0 0\n",              // +300 busy of +600
	}
	s := &loadSampler{
		readStat: func() ([]byte, error) {
			b := stats[0]
			stats = stats[1:]
			return []byte(b), nil
		},
		readMem:     func() uint64 { return 3 << 30 },
		statScratch: func(string) (uint64, bool) { return 7 << 30, true },
	}
	var first verbs.Load
	s.sample(&first, "/scratch")
	if first.CPUBusyPermille.Present {
		t.Errorf("the first sample has nothing to compare with, yet reported %d‰", first.CPUBusyPermille.Value)
	}
	if first.AvailableMemory.Value != 3<<30 || first.FreeScratch.Value != 7<<30 {
		t.Errorf("memory %d, scratch %d", first.AvailableMemory.Value, first.FreeScratch.Value)
	}
	var second verbs.Load
	s.sample(&second, "/scratch")
	if got := second.CPUBusyPermille; !got.Present || got.Value != 500 {
		t.Errorf("busy share = %+v, want 500‰ (300 busy jiffies of 600)", got)
	}
	s.readStat = func() ([]byte, error) { return nil, errors.New("no /proc") }
	var third verbs.Load
	s.sample(&third, "/scratch")
	if third.CPUBusyPermille.Present {
		t.Error("an unreadable /proc/stat reported a figure instead of leaving it unknown")
	}
}

func TestParseCPULineRefusesWhatIsNotTheCPULine(t *testing.T) {
	for _, in := range []string{"", "intr 1 2 3 4 5", "cpu 1 2 x 4 5", "cpu 1 2"} {
		if _, _, ok := parseCPULine([]byte(in)); ok {
			t.Errorf("parseCPULine(%q) accepted it", in)
		}
	}
}
