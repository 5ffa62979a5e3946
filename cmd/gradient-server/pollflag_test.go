package main

import (
	"testing"
	"time"
)

func TestPollIntervalFlag(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 60 * time.Second}, {[]string{"--poll-interval", "off"}, 0}, {[]string{"--poll-interval=0"}, 0},
		{[]string{"--poll-interval", "250ms"}, 250 * time.Millisecond},
	} {
		o, err := parse(tc.args, none)
		if err != nil || time.Duration(o.pollInterval) != tc.want {
			t.Errorf("parse(%v) = %v, %v; want %v", tc.args, time.Duration(o.pollInterval), err, tc.want)
		}
	}
	for _, bad := range []string{"-1s", "soon"} {
		if _, err := parse([]string{"--poll-interval", bad}, none); err == nil {
			t.Errorf("--poll-interval %s accepted", bad)
		}
	}
}
