package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// result is one phase: the polite client's round latencies and errors, the daemon's peak RSS,
// and (under attack) what the attackers saw.
type result struct {
	lat     []time.Duration
	errors  int
	lastErr error
	peakRSS int64
	attack  string
}

// politeLoop does what pace-cc does per compile, on a fresh connection each round: AUTH (when
// there is a password) and FETCH, and a STORE of a 16 KiB compile value every fourth round;
// each round is timed whole. A short pause keeps it a client, not a load generator.
func politeLoop(ctx context.Context, d *daemon) result {
	v, _ := value.Encode(value.Value{Object: make([]byte, 16<<10)})
	opts := kvclient.Options{Addr: d.addr, Password: d.password, Timeout: 10 * time.Second}
	var r result
	for i := 0; ctx.Err() == nil; i++ {
		start := time.Now()
		err := politeRound(opts, fmt.Sprint("polite-", i%64), v, i%4 == 0)
		if ctx.Err() != nil {
			break
		}
		r.lat = append(r.lat, time.Since(start))
		if err != nil {
			r.errors++
			r.lastErr = err
		}
		time.Sleep(5 * time.Millisecond)
	}
	slices.Sort(r.lat)
	return r
}

func politeRound(opts kvclient.Options, key string, v []byte, store bool) error {
	c, err := kvclient.Dial(context.Background(), opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, _, err := c.FetchAppend(context.Background(), nil, key); err != nil {
		return err
	}
	if store {
		return c.Store(context.Background(), key, kvclient.StoreArgs{}, v)
	}
	return nil
}

// p is the q-quantile of the latencies (0 without any).
func (r result) p(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(q*float64(len(r.lat))))]
}

func (r result) line(name string) string {
	s := fmt.Sprintf("phase=%s rounds=%d errors=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f peak_rss_mib=%d",
		name, len(r.lat), r.errors, ms(r.p(0.5)), ms(r.p(0.99)), ms(r.p(1)), r.peakRSS>>20)
	if r.lastErr != nil {
		s += fmt.Sprintf(" last_error=%q", r.lastErr.Error())
	}
	if r.attack != "" {
		s += " " + r.attack
	}
	return s
}
