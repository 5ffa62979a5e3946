package verbs

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

var validCompile = CompileRequest{
	LeaseToken: "dG9rZW4", Fingerprint: "gcc-13", Args: []string{"-O2", "-c", "-x", "cpp-output"},
	Source: []byte{0, 0, 0, 0, 3, 'i', 'n', 't'}, SourceName: "src/a.c",
}

func compileWith(mutate func([][]byte) [][]byte) func() error {
	fields := fieldsOf(wire.OpCompile, validCompile.Append(nil), mutate)
	return func() error { _, err := ParseCompile(fields()); return err }
}

// TestParseCompileRefusals covers pace-wire §1.13's COMPILE field notes.
func TestParseCompileRefusals(t *testing.T) {
	mf := wire.CodeMalformedFrame
	checkRefusals(t, []refusalCase{
		{"nine fields", compileWith(func(f [][]byte) [][]byte { return f[:9] }), "fields", mf, false},
		{"empty token", compileWith(set(0, nil)), "leaseToken", mf, false},
		{"fingerprint 65 bytes", compileWith(set(1, text(65))), "fingerprint", mf, true},
		{"truncated args list decodes to nothing", compileWith(set(2, list([]byte("-O2"), []byte("-c"))[:9])), "args", mf, false},
		{"argument with NUL", compileWith(set(2, list([]byte("-O2\x00")))), "args", mf, false},
		{"argument beyond MaxPath", compileWith(set(2, list(text(MaxPath+1)))), "args", mf, true},
		{"17 codecs", compileWith(set(4, text(17))), "codecs", mf, true},
		{"source name beyond MaxPath", compileWith(set(5, text(MaxPath+1))), "sourceName", mf, true},
		{"compileDir without replacement", compileWith(set(6, []byte("/home/u/p"))), "compileDir", mf, false},
		{"compileDir replacement alone", compileWith(set(7, []byte("/build"))), "compileDir", mf, false},
		{"sourceRoot without replacement", compileWith(set(8, []byte("/home/u/p"))), "sourceRoot", mf, false},
		{"sourceRoot replacement alone", compileWith(set(9, []byte("."))), "sourceRoot", mf, false},
	})
}

// TestParseCompileKeepsArgumentsWhole: one field per argument, so an
// argument with spaces or '=' is never split or joined.
func TestParseCompileKeepsArgumentsWhole(t *testing.T) {
	r := validCompile
	r.Args = []string{"-DMSG=hello world", "", "-I", "-fdebug-prefix-map=/a=/b"}
	r.CompileDir, r.CompileDirReplacement = "/home/u/p", "/build"
	fields := fieldsOf(wire.OpCompile, r.Append(nil), func(f [][]byte) [][]byte { return f })()
	got, err := ParseCompile(fields)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Args) != 4 || got.Args[0] != "-DMSG=hello world" || got.Args[1] != "" {
		t.Fatalf("args = %q", got.Args)
	}
	if &got.Source[0] != &fields[3][0] {
		t.Fatal("Source must alias the request field, not copy it")
	}
}

func TestParseCompileReplyRefusals(t *testing.T) {
	good := CompileReply{ExitCode: 0, Object: []byte{0, 0, 0, 0, 0}, Correlation: "0123456789abcdef0123456789abcdef"}
	reply := func(i int, b []byte) func() error {
		f, _ := wire.SplitFields(nil, good.Append(nil), CompileReplyArity)
		f[i] = b
		var payload []byte
		for _, x := range f {
			payload = wire.AppendField(payload, x)
		}
		return func() error { _, err := ParseCompileReply(payload); return err }
	}
	mf := wire.CodeMalformedFrame
	checkRefusals(t, []refusalCase{
		{"exit code 1 byte", reply(0, []byte{1}), "exitCode", mf, false},
		{"correlation 31 hex", reply(4, text(31)), "correlation", mf, false},
		{"correlation upper-case", reply(4, []byte("0123456789ABCDEF0123456789abcdef")), "correlation", mf, false},
		{"correlation not hex", reply(4, []byte("0123456789abcdef0123456789abcdeg")), "correlation", mf, false},
		{"signature 63 bytes", reply(5, make([]byte, 63)), "signature", mf, false},
		{"seven fields", func() error {
			_, err := ParseCompileReply(wire.AppendEmptyField(good.Append(nil)))
			return err
		}, "body", mf, false},
	})
}

// TestParseMintTicketAudience: the audience is the exact host:port about
// to be dialled; empty, loopback or wildcard is malformed (pace-wire §1.15.2).
func TestParseMintTicketAudience(t *testing.T) {
	for _, tc := range []struct {
		audience string
		ok       bool
	}{
		{"10.0.0.7:6674", true},
		{"build-3.example:6674", true},
		{"[2001:db8::7]:6674", true},
		{"", false},
		{"10.0.0.7", false},
		{"127.0.0.1:6674", false},
		{"127.8.9.1:6674", false},
		{"[::1]:6674", false},
		{"[::ffff:127.0.0.1]:6674", false},
		{"0.0.0.0:6674", false},
		{"[::]:6674", false},
		{":6674", false},
		{"localhost:6674", false},
		{"LocalHost:6674", false},
		{"ci.localhost:6674", false},
	} {
		_, err := ParseMintTicket([][]byte{[]byte(tc.audience)})
		if (err == nil) != tc.ok {
			t.Errorf("audience %q: err %v, want ok=%v", tc.audience, err, tc.ok)
		}
		if err != nil {
			if r, _ := RefusalOf(err); r.Code != wire.CodeMalformedFrame {
				t.Errorf("audience %q refused %s, want malformed-frame", tc.audience, r.Code)
			}
		}
	}
}

func TestParseMintTicketOkRefusals(t *testing.T) {
	ok := func(b []byte) func() error {
		return func() error { _, err := ParseMintTicketOk(wire.AppendField(nil, b)); return err }
	}
	checkRefusals(t, []refusalCase{
		{"empty ticket", ok(nil), "ticket", wire.CodeMalformedFrame, false},
		{"ticket beyond 1024 bytes", ok(make([]byte, MaxTicket+1)), "ticket", wire.CodeMalformedFrame, true},
	})
}

func TestParseNodeProofRefusals(t *testing.T) {
	mf := wire.CodeMalformedFrame
	k := make([]byte, KeyLen)
	checkRefusals(t, []refusalCase{
		{"nonce 31 bytes", func() error { _, err := ParseNodeChallenge([][]byte{k[:31], k}); return err }, "nonce", mf, false},
		{"ephemeral 33 bytes", func() error { _, err := ParseNodeChallenge([][]byte{k, append(k, 0)}); return err }, "ephemeral", mf, false},
		{"prove: empty id", func() error { _, err := ParseProveNode([][]byte{nil, k, make([]byte, 64)}); return err }, "nodeId", mf, false},
		{"prove: id 65 bytes", func() error { _, err := ParseProveNode([][]byte{text(65), k, make([]byte, 64)}); return err }, "nodeId", mf, true},
		{"prove: signature 32 bytes", func() error { _, err := ParseProveNode([][]byte{[]byte("n"), k, k}); return err }, "signature", mf, false},
		{"challenge ok: short body", func() error { _, err := ParseNodeChallengeOk(wire.AppendField(nil, k)); return err }, "body", mf, false},
	})
}

func TestRefusalOfPassesThroughWireErrors(t *testing.T) {
	r, ok := RefusalOf(wire.Refuse(wire.CodeNoCapacity, ""))
	if !ok || r.Code != wire.CodeNoCapacity {
		t.Fatalf("wire.Refusal: %+v %v", r, ok)
	}
	if r, ok := RefusalOf(wire.ErrPayloadTooLarge); !ok || r.Code != wire.CodePayloadTooLarge {
		t.Fatalf("wire sentinel: %+v %v", r, ok)
	}
	if _, ok := RefusalOf(errTest); ok {
		t.Fatal("an error with no code must not produce a refusal")
	}
}

var errTest = errorString("i/o")

type errorString string

func (e errorString) Error() string { return string(e) }
