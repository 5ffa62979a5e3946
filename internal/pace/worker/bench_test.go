package worker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// noCompiler stands in for the compiler: it writes an object of objSize
// bytes where the compiler would and exits 0, so a benchmark measures the
// worker's own per-job work.
func noCompiler(objSize int) func(context.Context, compileRun) (runResult, error) {
	obj := bytes.Repeat([]byte("\x7fELF object bytes "), objSize/18+1)[:objSize]
	return func(_ context.Context, r compileRun) (runResult, error) {
		r.started()
		out := r.args[len(r.args)-1]
		return runResult{}, os.WriteFile(out, obj, 0o600)
	}
}

// preprocessedTU looks like a preprocessed C file of about size bytes.
func preprocessedTU(size int) []byte {
	line := "extern int function_with_a_long_name(const char *restrict fmt, ...) __attribute__((__nothrow__));\n"
	return []byte("# 1 \"bench.c\"\n" + strings.Repeat(line, size/len(line)+1))
}

// BenchmarkCompilePipeline is the per-job overhead of the pipeline without
// the compiler: frame charge, parse, lease verification (signature and
// spend), envelope check and zstd expansion of the TU, allowlist, scratch
// directory and file, object read (a quarter of the TU's size), zstd seal,
// correlation digest and reply signature.
func BenchmarkCompilePipeline(b *testing.B) {
	for _, size := range []int{16 << 10, 1 << 20} {
		for _, verify := range []bool{true, false} {
			name := fmt.Sprintf("tu=%dKiB/lease-checked", size>>10)
			if !verify {
				name = fmt.Sprintf("tu=%dKiB/loopback-only", size>>10)
			}
			b.Run(name, func(b *testing.B) { benchPipeline(b, size, verify) })
		}
	}
}

func benchPipeline(b *testing.B, size int, verify bool) {
	opts := []option{withSlots(1)}
	if !verify {
		opts = append(opts, withoutLeaseChecks())
	}
	f := newFixture(b, opts...).start()
	f.w.spawn = noCompiler(size / 4)
	tu := preprocessedTU(size)
	base := f.request("", "-O2", "-g", "-fPIC", "-DNDEBUG", "-Wall", "-x", "cpp-output")
	base.Source = seal(b, wire.CodecZstd, tu)
	b.SetBytes(int64(len(tu)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		req := base
		req.LeaseToken = f.goodToken()
		payload := req.Append(nil)
		fields, _ := wire.SplitFields(nil, payload, 10)
		b.StartTimer()
		r := f.w.Compile(context.Background(), nil, uint32(len(payload)), fields)
		if r.Status != wire.StatusOk {
			b.Fatalf("refused: %q", r.Payload)
		}
		r.Release()
	}
}
