package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"regexp"
	"strconv"
	"testing"
)

// gradientV30SHA256 is the SHA-256 of Gradient's published v30 schema: the embedded copy is
// pinned to it, which pins wire compatibility with the public Gradient at protocol 30.
const gradientV30SHA256 = "2d9909f38f18f54344b52435af56d92e07e4374b0ed54dd10f1898f12f51b2b4"

func TestEverySchemaFileMatchesDescribe(t *testing.T) {
	name := regexp.MustCompile(`^v([0-9]+)\.txt$`)
	entries, err := fs.ReadDir(schemaFiles, "schema")
	if err != nil {
		t.Fatal(err)
	}
	supported := ProtoVersions()
	seen := map[uint16]bool{}
	for _, e := range entries {
		m := name.FindStringSubmatch(e.Name())
		if m == nil {
			t.Errorf("schema/%s is not named v{N}.txt", e.Name())
			continue
		}
		n, _ := strconv.ParseUint(m[1], 10, 16)
		v := uint16(n)
		seen[v] = true
		if !supported.Contains(v) {
			t.Errorf("schema/%s describes version %d outside the supported range %v", e.Name(), v, supported)
			continue
		}
		got, _ := SchemaFile(v)
		if want := Describe(v); got != want {
			t.Errorf("schema/%s differs from Describe(%d):\nfile:\n%s\ncode:\n%s", e.Name(), v, got, want)
		}
	}
	for v := range supported.All() {
		if !seen[v] {
			t.Errorf("no schema/v%d.txt for supported version %d; run gradient-wire-schema", v, v)
		}
	}
}

func TestEmbeddedSchemaV30IsGradients(t *testing.T) {
	ours, ok := SchemaFile(30)
	if !ok {
		t.Fatal("schema/v30.txt is missing")
	}
	sum := sha256.Sum256([]byte(ours))
	if got := hex.EncodeToString(sum[:]); got != gradientV30SHA256 {
		t.Errorf("schema/v30.txt has SHA-256 %s, Gradient's v30 schema has %s", got, gradientV30SHA256)
	}
}

func TestProtoVersionsIsThirtyOnly(t *testing.T) {
	if got := ProtoVersions(); got != (VersionRange{30, 30}) {
		t.Errorf("ProtoVersions() = %v, want 30..=30 (gradient-protocol §0: protocol 30 only)", got)
	}
}
