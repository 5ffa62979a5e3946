package server

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// BenchmarkCacheSessionPullQuery1000 is the cache-session query benchmark: one
// anonymous session over loopback asks Pull queries of 1000 stored paths (the most one
// query may name) and waits for each answer; queries/s is the figure.
func BenchmarkCacheSessionPullQuery1000(b *testing.B) {
	r := newCacheRig(b, Config{})
	paths := make([]string, 1000)
	obj := narstoretest.Make(narstoretest.NAR(200, 1))
	for i := range paths {
		paths[i] = fmt.Sprintf("/nix/store/%s-path-%d", nix32Of(i), i)
		hash, _ := store.StoreHash(paths[i])
		st, err := r.srv.cfg.NARs.Stage(paths[i])
		if err == nil {
			if err = st.Write(0, obj.Compressed); err == nil {
				err = st.Commit(hash, obj.Expect)
			}
		}
		if err == nil {
			err = r.st.PutCachedPath(ctx, store.CachedPath{StorePath: paths[i], NarHash: obj.Expect.NarHash.String(),
				NarSize: obj.Expect.NarSize, FileHash: obj.Expect.FileHash.String(), FileSize: obj.Expect.FileSize,
				References: paths[:min(i, 3)]}, []string{r.pub.ID})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	c, err := r.dialConn("pub", "")
	if err != nil {
		b.Fatal(err)
	}
	q := &wire.CacheQuery{Paths: paths, Mode: wire.QueryModePull, NarSizes: make([]wire.Option[uint64], len(paths))}
	b.ResetTimer()
	for b.Loop() {
		q.QueryID = uuid.NewString()
		if err := c.Send(ctx, q); err != nil {
			b.Fatal(err)
		}
		m, release, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		st, ok := m.(*wire.CacheStatus)
		if !ok || len(st.Cached) != len(paths) || !st.Cached[0].Cached {
			b.Fatalf("answer: %T", m)
		}
		release()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}

// nix32Of is a valid 32-character store hash for i.
func nix32Of(i int) string {
	const alphabet = "0123456789abcdfghijklmnpqrsvwxyz"
	out := []byte("00000000000000000000000000000000")
	for j := 31; i > 0; j-- {
		out[j] = alphabet[i%32]
		i /= 32
	}
	return string(out)
}
