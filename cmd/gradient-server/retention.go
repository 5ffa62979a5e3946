package main

import (
	"errors"
	"flag"
	"strconv"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/retention"
	"github.com/buildfleet/buildfleet/internal/gradient/server"
)

// retentionFlags registers the cache's retention flags (gradient-server §15) on fs.
func retentionFlags(fs *flag.FlagSet, rc *server.RetentionConfig) {
	rc.Policy = retention.Policy{KeepEvaluations: 3, KeepFetched: 7 * 24 * time.Hour}
	rc.Interval = time.Hour
	fs.Func("keep-evaluations", "the newest `N` evaluations of each project and branch keep their closure in the cache (default 3)", func(v string) error {
		n, err := parsePositive(v)
		rc.Policy.KeepEvaluations = n
		return err
	})
	fs.Func("keep-fetched", "keep every cached path stored or fetched within this `age`, e.g. 7d or 12h; 0 turns it off (default 7d)", ageInto(&rc.Policy.KeepFetched))
	fs.Func("keep-logs", "prune settled evaluations and build logs older than this `age` that no kept evaluation needs, at each collection; 0 keeps them (default 0)", ageInto(&rc.KeepLogs))
	fs.Func("cache-max-disk", "collect the cache when its NAR objects take more than `SIZE`, e.g. 50G; 0 is no cap (default 0)", func(v string) error {
		n, err := retention.ParseSize(v)
		rc.MaxDisk = n
		return err
	})
	fs.Func("gc-interval", "collect the cache this often (an `age` such as 1h or 1d); 0 only on the disk cap or admin cache gc (default 1h)", ageInto(&rc.Interval))
}

func ageInto(d *time.Duration) func(string) error {
	return func(v string) error {
		var err error
		*d, err = retention.ParseAge(v)
		return err
	}
}

func parsePositive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errors.New("want a whole number from 1")
	}
	return n, nil
}
