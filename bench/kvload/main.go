// Command kvload is the load generator behind `make bench`'s cache comparison: it drives one
// cache server with FETCH/STORE over pace's 0xFC protocol or GET/SET over Redis's RESP, with the
// same value size, connection count and working set, and prints throughput and latency.
//
// Each connection sends one request and waits for its reply before the next (no pipelining), on
// both protocols, with reply buffers reused, so the two servers are measured doing the same work.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"time"
)

// client is one connection speaking one protocol.
type client interface {
	set(key string, val []byte) error
	get(key string, buf []byte) ([]byte, error)
	close()
}

type config struct {
	proto, addr, password string
	size, conns, keys     int
	duration              time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.proto, "proto", "pace", "pace (0xFC FETCH/STORE) or redis (RESP GET/SET)")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:6674", "server address")
	flag.StringVar(&c.password, "password", "", "pace-kv password")
	flag.IntVar(&c.size, "size", 64<<10, "value size in bytes")
	flag.IntVar(&c.conns, "conns", 16, "concurrent connections")
	flag.IntVar(&c.keys, "keys", 0, "working-set keys (default: 64 MiB worth, between 16 and 1024)")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "measurement time")
	flag.Parse()
	if c.keys == 0 {
		c.keys = max(16, min(1024, (64<<20)/c.size))
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "kvload:", err)
		os.Exit(1)
	}
}

func dial(c config) (client, error) {
	if c.proto == "redis" {
		return dialRedis(c.addr)
	}
	return dialPace(c.addr, c.password)
}

func run(c config) error {
	if err := preload(c); err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	lat, err := measure(c)
	if err != nil {
		return err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ops := float64(len(lat)) / c.duration.Seconds()
	pct := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e3 }
	fmt.Printf("proto=%s size=%d conns=%d keys=%d ops=%d ops_per_s=%.0f MB_per_s=%.1f p50_us=%.1f p99_us=%.1f\n",
		c.proto, c.size, c.conns, c.keys, len(lat), ops, ops*float64(c.size)/1e6, pct(0.50), pct(0.99))
	return nil
}

func key(i int) string { return fmt.Sprintf("kvload:%d:%08d", 0, i) }

func preload(c config) error {
	cl, err := dial(c)
	if err != nil {
		return err
	}
	defer cl.close()
	val := make([]byte, c.size)
	for i := 0; i < c.keys; i++ {
		for j := range val {
			val[j] = byte(i + j)
		}
		if err := cl.set(key(i), val); err != nil {
			return err
		}
	}
	return nil
}

// measure runs c.conns connections fetching random keys until the deadline and returns every
// request's latency in nanoseconds.
func measure(c config) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var wg sync.WaitGroup
	results := make([][]int64, c.conns)
	errs := make([]error, c.conns)
	for w := 0; w < c.conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			results[w], errs[w] = worker(ctx, c, uint64(w))
		}(w)
	}
	wg.Wait()
	var all []int64
	for w := range results {
		if errs[w] != nil {
			return nil, errs[w]
		}
		all = append(all, results[w]...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no request completed")
	}
	return all, nil
}

func worker(ctx context.Context, c config, seed uint64) ([]int64, error) {
	cl, err := dial(c)
	if err != nil {
		return nil, err
	}
	defer cl.close()
	rng := rand.New(rand.NewPCG(seed, 7))
	buf := make([]byte, 0, c.size+1024)
	lat := make([]int64, 0, 1<<16)
	for ctx.Err() == nil {
		k := key(rng.IntN(c.keys))
		start := time.Now()
		out, err := cl.get(k, buf[:0])
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", k, err)
		}
		if len(out) < c.size {
			return nil, fmt.Errorf("get %s: %d bytes, want at least %d", k, len(out), c.size)
		}
		lat = append(lat, time.Since(start).Nanoseconds())
	}
	return lat, nil
}
