package wire

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var updateCorpus = flag.Bool("update-fuzz-corpus", false, "rewrite the seed corpora under testdata/fuzz")

func FuzzDecodeClientMessage(f *testing.F) { fuzzDecode(f, clientMessageEnum) }
func FuzzDecodeServerMessage(f *testing.F) { fuzzDecode(f, serverMessageEnum) }

// fuzzVersions are the supported versions plus a few outside the range: decoding must never
// panic at any version, and whatever decodes must re-encode to the same bytes.
func fuzzVersions() []uint16 {
	vs := slices.Collect(ProtoVersions().All())
	return append(vs, 0, 27, 28, 29, 31, 0xffff)
}

func fuzzDecode(f *testing.F, d *enumDef) {
	versions := fuzzVersions()
	f.Fuzz(func(t *testing.T, frame []byte) {
		for _, v := range versions {
			m, err := decodeAs(d, frame, v)
			if err != nil {
				if de := (*DecodeError)(nil); !errors.As(err, &de) {
					t.Fatalf("v%d: error %v is not a *DecodeError", v, err)
				}
				continue
			}
			again, err := Encode(m, v)
			if err != nil {
				t.Fatalf("v%d: decoded %T does not re-encode: %v", v, m, err)
			}
			if !bytes.Equal(again, frame) {
				t.Fatalf("v%d: re-encoding differs\nframe % x\nagain % x", v, frame, again)
			}
		}
	})
}

// seedCorpus is what testdata/fuzz holds for one target: the reference vectors and one encoded
// instance of every variant at the newest supported version.
func seedCorpus(t *testing.T, d *enumDef) map[string][]byte {
	seeds := map[string][]byte{}
	if d == clientMessageEnum {
		seeds["vector-cachequery"] = mustHex(t, "15016a017102022f61022f6201020001ac0201")
		seeds["vector-workermetrics-v30"] = mustHex(t, "050000c03f800101000000c00000")
		seeds["vector-workermetrics-v27"] = mustHex(t, "050000c03f800101000000c000")
	}
	v := ProtoVersions().Newest
	g := newValueGen(v)
	for i := range g.present(d) {
		m := exampleMessage(g, d, i)
		frame, err := Encode(m, v)
		if err != nil {
			t.Fatal(err)
		}
		seeds[fmt.Sprintf("variant-%02d-%s", i, d.variants[i].name)] = frame
	}
	return seeds
}

// exampleMessage draws a fixed example of variant i (rapid refuses to draw fieldless ones).
func exampleMessage(g *valueGen, d *enumDef, i int) Message {
	if d.variants[i].typ.NumField() == 0 {
		return reflect.New(d.variants[i].typ).Interface().(Message)
	}
	return rapid.Custom(func(t *rapid.T) Message { return g.message(t, d, i) }).Example(i)
}

// TestFuzzSeedCorpus checks the committed corpora hold an instance of every variant (run with
// -update-fuzz-corpus to regenerate them after adding a message).
func TestFuzzSeedCorpus(t *testing.T) {
	for target, d := range map[string]*enumDef{
		"FuzzDecodeClientMessage": clientMessageEnum, "FuzzDecodeServerMessage": serverMessageEnum,
	} {
		dir := filepath.Join("testdata", "fuzz", target)
		if *updateCorpus {
			writeCorpus(t, dir, seedCorpus(t, d))
		}
		covered := map[reflect.Type]bool{}
		for name, frame := range readCorpus(t, dir) {
			if m, err := decodeAs(d, frame, ProtoVersions().Newest); err == nil {
				covered[reflect.TypeOf(m).Elem()] = true
			} else if !strings.HasPrefix(name, "vector-") {
				t.Errorf("%s/%s does not decode: %v", target, name, err)
			}
		}
		for _, v := range d.variants {
			if !covered[v.typ] {
				t.Errorf("%s has no seed for %s; run go test -run TestFuzzSeedCorpus -update-fuzz-corpus", target, v.name)
			}
		}
	}
}

const corpusHeader = "go test fuzz v1\n"

func writeCorpus(t *testing.T, dir string, seeds map[string][]byte) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, frame := range seeds {
		body := corpusHeader + "[]byte(" + strconv.Quote(string(frame)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readCorpus(t *testing.T, dir string) map[string][]byte {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lit, ok := strings.CutPrefix(string(raw), corpusHeader+"[]byte(")
		lit, ok2 := strings.CutSuffix(strings.TrimSpace(lit), ")")
		frame, err := strconv.Unquote(lit)
		if !ok || !ok2 || err != nil {
			t.Fatalf("%s/%s is not a []byte corpus entry", dir, e.Name())
		}
		out[e.Name()] = []byte(frame)
	}
	return out
}
