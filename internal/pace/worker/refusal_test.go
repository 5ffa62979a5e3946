package worker

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

const tinyTU = "# 1 \"a.c\"\nint answer(void) { return 42; }\n"

// refusalCase is one refusal of the pipeline (pace-node §5.3, pace-node §5.4,
// pace-wire §1.9, pace-wire §3.10): what the request does
// wrong, the code it is answered with and the one counter that counts it.
type refusalCase struct {
	name    string
	opts    func(t *testing.T) []option
	setup   func(f *fixture)
	request func(f *fixture) []byte // the COMPILE payload
	code    wire.Code
	counter string
	names   string // the refusal message must contain this
}

func fixed(opts ...option) func(*testing.T) []option {
	return func(*testing.T) []option { return opts }
}

func payloadOf(mutate func(f *fixture, r *verbs.CompileRequest)) func(f *fixture) []byte {
	return func(f *fixture) []byte {
		r := f.request(tinyTU, "-O2", "-x", "cpp-output")
		if mutate != nil {
			mutate(f, &r)
		}
		return r.Append(nil)
	}
}

func withArgs(args ...string) func(f *fixture) []byte {
	return payloadOf(func(f *fixture, r *verbs.CompileRequest) { r.Args = append(args, "-x", "cpp-output") })
}

// envelopeHeader is a bare envelope header declaring rawLen.
func envelopeHeader(c wire.Codec, rawLen uint32, body ...byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{byte(c)}, rawLen), body...)
}

func leaseCases() []refusalCase {
	return []refusalCase{
		{name: "forged token (wrong key)", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.LeaseToken = f.token(fakeFP, testEndpoint, f.clock.Now().Add(time.Minute), leasetest.NewSigner("impostor"))
		}), code: wire.CodeLeaseUnauthorized, counter: "pace_worker_jobs_refused_lease_unauthorized_total", names: testLeader},
		{name: "junk token", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) { r.LeaseToken = "not-a-token" }),
			code: wire.CodeLeaseUnauthorized, counter: "pace_worker_jobs_refused_lease_unauthorized_total"},
		{name: "token for another endpoint", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.LeaseToken = f.token(fakeFP, "10.0.0.9:6674", f.clock.Now().Add(time.Minute), f.leader)
		}), code: wire.CodeLeaseEndpointMismatch, counter: "pace_worker_jobs_refused_lease_endpoint_mismatch_total", names: "10.0.0.9:6674"},
		{name: "expired token", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.LeaseToken = f.token(fakeFP, testEndpoint, f.clock.Now().Add(-6*time.Minute), f.leader)
		}), code: wire.CodeLeaseExpired, counter: "pace_worker_jobs_refused_lease_expired_total"},
		{name: "signer revoked", setup: func(f *fixture) { f.state.roster.Revoke(f.leader.Public()) },
			request: payloadOf(nil), code: wire.CodeLeaseUnauthorized, counter: "pace_worker_jobs_refused_lease_signer_revoked_total"},
		{name: "no roster yet", setup: func(f *fixture) { f.state.empty.Store(true) },
			request: payloadOf(nil), code: wire.CodeGrantUnverifiable, counter: "pace_worker_jobs_refused_lease_no_roster_total"},
		{name: "isolated 65 minutes", setup: func(f *fixture) { f.clock.Advance(66 * time.Minute) },
			request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
				r.LeaseToken = f.token(fakeFP, testEndpoint, f.clock.Now().Add(time.Minute), f.leader)
			}), code: wire.CodeGrantUnverifiable, counter: "pace_worker_jobs_refused_lease_isolated_total"},
		{name: "lease for a toolchain not served", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			other := strings.Repeat("cd", 32)
			r.Fingerprint, r.LeaseToken = other, f.token(other, testEndpoint, f.clock.Now().Add(time.Minute), f.leader)
		}), code: wire.CodeFingerprintMismatch, counter: "pace_worker_jobs_refused_unknown_fingerprint_total"},
	}
}

func argumentCases() []refusalCase {
	var out []refusalCase
	for _, args := range [][]string{
		{"-fplugin=x.so"}, {"-wrapper", "gdb,--args"}, {"-B/tmp"}, {"-Bprefix"}, {"-specs=x.specs"},
		{"-Xclang", "-load"}, {"-fpass-plugin=x.so"}, {"-fmodule-mapper=|sh"}, {"@args.rsp"}, {"-o", "/tmp/x.o"},
	} {
		out = append(out, refusalCase{name: "argument " + args[0], request: withArgs(args...),
			code: wire.CodeWorkerRejectedArgument, counter: "pace_worker_jobs_refused_rejected_argument_total", names: args[0]})
	}
	return out
}

func envelopeCases() []refusalCase {
	return []refusalCase{
		{name: "envelope declares 4 GiB", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.Source = envelopeHeader(wire.CodecLZ4, 0xFFFFFFFF, 0x10, 'a')
		}), code: wire.CodePayloadTooLarge, counter: "pace_worker_jobs_refused_envelope_declared_too_large_total"},
		{name: "unsupported codec", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.Source = envelopeHeader(9, 4, 'a', 'b', 'c', 'd')
		}), code: wire.CodeUnsupportedCodec, counter: "pace_worker_jobs_refused_envelope_unsupported_codec_total"},
		{name: "envelope shorter than its header", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.Source = []byte{0, 0, 0}
		}), code: wire.CodeMalformedFrame, counter: "pace_worker_jobs_refused_envelope_malformed_total"},
		{name: "identity envelope disagreeing with its length", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.Source = envelopeHeader(wire.CodecIdentity, 10, 'a')
		}), code: wire.CodeMalformedFrame, counter: "pace_worker_jobs_refused_envelope_malformed_total"},
		{name: "lz4 bytes that do not expand to rawLen", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			good := seal(f.t, wire.CodecLZ4, []byte(strings.Repeat(tinyTU, 64)))
			binary.BigEndian.PutUint32(good[1:5], binary.BigEndian.Uint32(good[1:5])+7)
			r.Source = good
		}), code: wire.CodeMalformedFrame, counter: "pace_worker_jobs_refused_envelope_corrupt_total"},
		{name: "zstd bytes damaged", request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			good := seal(f.t, wire.CodecZstd, []byte(strings.Repeat(tinyTU, 64)))
			good[len(good)-3] ^= 0xff
			r.Source = good
		}), code: wire.CodeMalformedFrame, counter: "pace_worker_jobs_refused_envelope_corrupt_total"},
	}
}

func stateCases() []refusalCase {
	return []refusalCase{
		{name: "malformed fields", request: func(f *fixture) []byte {
			return verbs.CompileRequest{LeaseToken: "t", Fingerprint: fakeFP, CompileDir: "/half"}.Append(nil)
		}, code: wire.CodeMalformedFrame, counter: "pace_worker_frames_refused_malformed_payload_total"},
		{name: "frame above the request ceiling", opts: fixed(withBudget(4096)), request: payloadOf(func(f *fixture, r *verbs.CompileRequest) {
			r.Source = seal(f.t, wire.CodecIdentity, make([]byte, 5000))
		}), code: wire.CodePayloadTooLarge, counter: "pace_worker_frames_refused_payload_too_large_total"},
		{name: "cordoned", setup: func(f *fixture) { f.w.Cordon() }, request: payloadOf(nil),
			code: wire.CodeNoCapacity, counter: "pace_worker_jobs_refused_cordoned_total", names: "cordoned"},
		{name: "stopping", setup: func(f *fixture) { f.w.Stop(f.t.Context(), 0) }, request: payloadOf(nil),
			code: wire.CodeNoCapacity, counter: "pace_worker_jobs_refused_stopping_total", names: "stopping"},
		{name: "unknown fingerprint without lease checks", opts: fixed(withoutLeaseChecks()),
			request: payloadOf(func(f *fixture, r *verbs.CompileRequest) { r.Fingerprint = strings.Repeat("0", 64) }),
			code:    wire.CodeFingerprintMismatch, counter: "pace_worker_jobs_refused_unknown_fingerprint_total"},
		{name: "compiler unclassified", opts: func(t *testing.T) []option {
			path, _ := fakeCompiler(t, "mycc")
			return []option{withPins(Pin{Fingerprint: fakeFP, Compiler: path})}
		}, request: payloadOf(nil), code: wire.CodeWorkerCompilerUnclassified, counter: "pace_worker_jobs_refused_compiler_unclassified_total"},
		{name: "scratch unavailable", setup: func(f *fixture) {
			os.RemoveAll(f.w.scratch.dir)
			os.WriteFile(f.w.scratch.dir, []byte("not a directory"), 0o600)
		}, request: payloadOf(nil), code: wire.CodeWorkerScratchUnavailable, counter: "pace_worker_jobs_refused_scratch_unavailable_total"},
		{name: "compiler cannot be spawned", opts: func(t *testing.T) []option {
			path := filepath.Join(t.TempDir(), "gcc")
			os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755)
			return []option{withPins(Pin{Fingerprint: fakeFP, Compiler: path})}
		}, setup: func(f *fixture) { os.Remove(f.w.Toolchains()[0].Path) }, request: payloadOf(nil),
			code: wire.CodeWorkerSpawnFailed, counter: "pace_worker_jobs_refused_spawn_failed_total"},
	}
}

// TestRefusals answers each refusal with its code, counts it in exactly
// its own counter, and leaves no slot, charge or scratch directory behind.
func TestRefusals(t *testing.T) {
	var cases []refusalCase
	for _, group := range [][]refusalCase{leaseCases(), argumentCases(), envelopeCases(), stateCases()} {
		cases = append(cases, group...)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []option
			if tc.opts != nil {
				opts = tc.opts(t)
			}
			f := newFixture(t, opts...).start()
			if tc.setup != nil {
				tc.setup(f)
			}
			before := counterValues(f.w)
			o := f.compileFields(tc.request(f))
			if o.status != wire.StatusError || o.refusal.Code != tc.code {
				t.Fatalf("answered %s %v, want refusal %s", o.status, o.refusal, tc.code)
			}
			if !strings.Contains(o.refusal.Message, tc.names) {
				t.Errorf("refusal %q does not name %q", o.refusal.Message, tc.names)
			}
			moved := changedCounters(before, counterValues(f.w))
			delete(moved, "pace_worker_bytes_received_total")
			if len(moved) != 1 || moved[tc.counter] != 1 {
				t.Fatalf("counters moved %v, want exactly %s by 1", moved, tc.counter)
			}
			if st := f.w.Status(); st.InFlight != 0 || st.BytesInFlight != 0 {
				t.Fatalf("refusal left %d in flight, %d bytes charged", st.InFlight, st.BytesInFlight)
			}
		})
	}
}

// TestReplayedLeaseIsRefused: a lease buys one compile at this worker.
func TestReplayedLeaseIsRefused(t *testing.T) {
	f := newFixture(t).start()
	req := f.request(tinyTU, "-O2", "-x", "cpp-output")
	if o := f.compile(req); o.status != wire.StatusOk {
		t.Fatalf("first use refused: %v", o.refusal)
	}
	before := counterValues(f.w)
	o := f.compile(req)
	if o.status != wire.StatusError || o.refusal.Code != wire.CodeLeaseUnauthorized {
		t.Fatalf("replay answered %s %v", o.status, o.refusal)
	}
	if moved := changedCounters(before, counterValues(f.w)); moved["pace_worker_jobs_refused_lease_replayed_total"] != 1 {
		t.Fatalf("counters moved %v", moved)
	}
}

// TestLeaseCheckedBeforeDecompression: a junk token with a 4 GiB envelope
// is refused for the token, not the envelope (pace-node §5.3 step 4 before 6).
func TestLeaseCheckedBeforeDecompression(t *testing.T) {
	f := newFixture(t).start()
	r := f.request(tinyTU)
	r.LeaseToken, r.Source = "junk", envelopeHeader(wire.CodecZstd, 0xFFFFFFFF, 1, 2, 3)
	o := f.compile(r)
	if o.refusal.Code != wire.CodeLeaseUnauthorized {
		t.Fatalf("answered %v, want lease-unauthorized", o.refusal)
	}
	if n := f.w.Counters().EnvelopeDeclaredTooLarge.Load(); n != 0 {
		t.Fatalf("the envelope was looked at before the lease: %d", n)
	}
}

// TestDeclaredFourGiBAllocatesNothing: a COMPILE whose envelope declares
// 4 GiB in a tiny frame is refused payload-too-large before anything is
// allocated for the declaration (pace-node §5.2).
func TestDeclaredFourGiBAllocatesNothing(t *testing.T) {
	f := newFixture(t).start()
	payload := func() []byte {
		r := f.request(tinyTU)
		r.Source = envelopeHeader(wire.CodecZstd, 0xFFFFFFFF, 0x28, 0xb5, 0x2f, 0xfd)
		return r.Append(nil)
	}
	f.compileFields(payload()) // warm up pools
	p := payload()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	o := f.compileFields(p)
	runtime.ReadMemStats(&after)
	if o.refusal.Code != wire.CodePayloadTooLarge {
		t.Fatalf("answered %v", o.refusal)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Fatalf("refusing a 4 GiB declaration allocated %d bytes", grew)
	}
}
