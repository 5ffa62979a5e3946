package netlab

import "testing"

// ForTest makes a lab with the named hosts for a test, fails the test at once when it cannot
// (never skipping it: a test that needs a network and has none has not passed), and closes the
// lab when the test ends. The hosts come back in the order named.
func ForTest(tb testing.TB, hosts ...string) (*Lab, []*Host) {
	tb.Helper()
	l, err := New(Options{})
	if err != nil {
		tb.Fatalf("netlab: %v", err)
	}
	tb.Cleanup(func() {
		if err := l.Close(); err != nil {
			tb.Errorf("netlab: closing the lab: %v", err)
		}
	})
	hs := make([]*Host, len(hosts))
	for i, name := range hosts {
		if hs[i], err = l.AddHost(name); err != nil {
			tb.Fatalf("netlab: %v", err)
		}
	}
	return l, hs
}
