package worker

import (
	"context"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// FuzzCompile feeds the pipeline arbitrary COMPILE payloads (as the
// frameserver would, split with the verb's arity): it must answer every
// one with Ok or a live refusal, never panic, and give back every slot and
// byte it charged.
func FuzzCompile(f *testing.F) {
	good := verbs.CompileRequest{
		LeaseToken: "t", Fingerprint: fakeFP, Args: []string{"-O2", "-x", "cpp-output"},
		Source: []byte{0, 0, 0, 0, 3, 'i', 'n', 't'}, Codecs: wire.NewCodecList(wire.CodecLZ4), SourceName: "a.c",
		CompileDir: "/w", CompileDirReplacement: ".",
	}
	f.Add(good.Append(nil))
	bad := good
	bad.Source = []byte{2, 0xff, 0xff, 0xff, 0xff, 0x28, 0xb5, 0x2f, 0xfd}
	f.Add(bad.Append(nil))
	bad.Args = []string{"-fplugin=x.so"}
	f.Add(bad.Append(nil))
	fx := newFixture(f, withoutLeaseChecks(), withBudget(1<<20)).start()
	fx.w.spawn = noCompiler(64)
	f.Fuzz(func(t *testing.T, payload []byte) {
		fields, err := wire.SplitFields(nil, payload, verbs.CompileArity)
		if err != nil {
			return // the frameserver refuses a wrong arity before the worker
		}
		r := fx.w.Compile(context.Background(), nil, uint32(len(payload)), fields)
		switch r.Status {
		case wire.StatusOk:
			if _, err := verbs.ParseCompileReply(r.Payload); err != nil {
				t.Fatalf("Ok reply does not parse: %v", err)
			}
		case wire.StatusError:
			ref, err := wire.ParseErrorPayload(r.Payload)
			if err != nil || !ref.Code.Live() {
				t.Fatalf("refusal %v %v", ref, err)
			}
		default:
			t.Fatalf("status %s", r.Status)
		}
		r.Release()
		if st := fx.w.Status(); st.InFlight != 0 || st.BytesInFlight != 0 {
			t.Fatalf("left %d in flight, %d bytes charged", st.InFlight, st.BytesInFlight)
		}
	})
}
