package upstream

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/binarycache"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

const (
	testPath = "/nix/store/0mdqa9w1p6cmli6976v4wi0sw9r4p5pr-dep"
	testRef  = "0iz84xy22rpj9d46qj6dz4sbicjazq3d-lib"
)

var testHash = nixhash.SHA256(sha256.Sum256([]byte("nar")))

// goodNarInfo is a narinfo as `nix copy --to file://…` writes one.
func goodNarInfo() string {
	return "StorePath: " + testPath + "\nURL: nar/1abc.nar.xz\nCompression: xz\n" +
		"FileHash: " + testHash.String() + "\nFileSize: 120\nNarHash: " + testHash.String() +
		"\nNarSize: 344\nReferences: " + testRef + "\nDeriver: 0iz84xy22rpj9d46qj6dz4sbicjazq3d-dep.drv\n" +
		"Sig: up-1:AAAA\n"
}

func TestParseNarInfo(t *testing.T) {
	good := goodNarInfo()
	cases := []struct {
		name, text string
		ok         bool
	}{
		{"as nix writes it", good, true},
		{"unknown keys skipped", good + "System: x86_64-linux\n", true},
		{"no compression line means bzip2", strings.Replace(strings.Replace(good, "Compression: xz\n", "", 1), ".nar.xz", ".nar.bz2", 1), true},
		{"uncompressed", strings.Replace(strings.Replace(good, "Compression: xz", "Compression: none", 1), ".nar.xz", ".nar", 1), true},
		{"no references", strings.Replace(good, "References: "+testRef, "References: ", 1), true},
		{"empty", "", false},
		{"no colon", good + "garbage\n", false},
		{"missing URL", strings.Replace(good, "URL: nar/1abc.nar.xz\n", "", 1), false},
		{"missing NarHash", strings.Replace(good, "NarHash: ", "NarHashX: ", 1), false},
		{"bad NarSize", strings.Replace(good, "NarSize: 344", "NarSize: -1", 1), false},
		{"bad hash", strings.Replace(good, "NarHash: sha256:", "NarHash: md5:", 1), false},
		{"relative store path", strings.Replace(good, "StorePath: /nix/store/", "StorePath: ", 1), false},
		{"reference with a slash", strings.Replace(good, "References: ", "References: /nix/store/", 1), false},
		{"compression and URL disagree", strings.Replace(good, "Compression: xz", "Compression: zstd", 1), false},
		{"unknown compression", strings.Replace(good, "Compression: xz", "Compression: lz4", 1), false},
		{"too large", good + strings.Repeat("X: y\n", MaxNarInfoSize/5+1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := ParseNarInfo([]byte(c.text))
			if c.ok != (err == nil) {
				t.Fatalf("ParseNarInfo: err = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrBadNarInfo) {
				t.Fatalf("error %v does not wrap ErrBadNarInfo", err)
			}
			if c.ok && (n.StorePath != testPath || n.NarSize != 344) {
				t.Fatalf("parsed %+v", n)
			}
		})
	}
}

func TestSignedByChecksTheTrustedKeyOnly(t *testing.T) {
	key := mustKey(t, "up-1")
	other := mustKey(t, "up-1") // the same name, another key: a forger's
	n, err := ParseNarInfo([]byte(strings.Replace(goodNarInfo(), "Sig: up-1:AAAA\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := binarycache.Fingerprint(n.StorePath, n.NarHash, n.NarSize, n.References)
	if err != nil {
		t.Fatal(err)
	}
	n.Sigs = []string{other.Sign(fp), key.Sign(fp)}
	if got := n.SignedBy(key.PublicKey()); len(got) != 1 || got[0] != n.Sigs[1] {
		t.Fatalf("SignedBy(trusted) = %v", got)
	}
	n.Sigs = n.Sigs[:1]
	if got := n.SignedBy(key.PublicKey()); len(got) != 0 {
		t.Fatalf("SignedBy accepted a signature by an untrusted key: %v", got)
	}
	n.Sigs = []string{key.Sign(fp)}
	n.NarSize++ // the signature no longer covers what the narinfo says
	if got := n.SignedBy(key.PublicKey()); len(got) != 0 {
		t.Fatalf("SignedBy accepted a signature of another fingerprint: %v", got)
	}
}

func mustKey(t *testing.T, name string) binarycache.SigningKey {
	t.Helper()
	k, err := binarycache.GenerateKey(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestNarInfoRoundTrip: whatever gradient's own binary cache writes parses back to the same
// fields (property).
func TestNarInfoRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hash := nixhash.SHA256(sha256.Sum256(rapid.SliceOf(rapid.Byte()).Draw(t, "nar")))
		size := rapid.Int64Range(1, 1<<40).Draw(t, "size")
		refs := rapid.SliceOfNDistinct(rapid.StringMatching(`[0-9a-df-np-sv-z]{32}-[a-z][a-z0-9.+-]{0,20}`), 0, 5, rapid.ID).Draw(t, "refs")
		full := make([]string, len(refs))
		for i, r := range refs {
			full[i] = "/nix/store/" + r
		}
		in := binarycache.NarInfo{StorePath: testPath, URL: "nar/" + nixhash.EncodeBase32(hash[:]) + ".nar.zst",
			Compression: "zstd", FileHash: hash.String(), FileSize: size, NarHash: hash.String(), NarSize: size,
			References: full, Signatures: []string{"k:" + rapid.StringMatching(`[A-Za-z0-9+/]{0,20}`).Draw(t, "sig")}}
		out, err := ParseNarInfo([]byte(in.String()))
		if err != nil {
			t.Fatalf("ParseNarInfo(%q): %v", in.String(), err)
		}
		if out.NarHash != in.NarHash || out.NarSize != in.NarSize || out.URL != in.URL ||
			strings.Join(out.FullReferences(), " ") != strings.Join(full, " ") || out.Sigs[0] != in.Signatures[0] {
			t.Fatalf("round trip: %+v -> %+v", in, out)
		}
	})
}

// FuzzParseNarInfo: the parser never panics, and what it accepts satisfies its own checks
// and parses the same again from the fields it kept.
func FuzzParseNarInfo(f *testing.F) {
	f.Add([]byte(goodNarInfo()))
	f.Add([]byte("StorePath: /nix/store/x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseNarInfo(b)
		if err != nil {
			return
		}
		if n.check() != nil || n.NarHash == "" || !strings.HasPrefix(n.StorePath, "/") {
			t.Fatalf("accepted an invalid narinfo: %+v", n)
		}
		if CompressionOf(n.URL) == "" {
			t.Fatalf("accepted a URL of unknown compression: %q", n.URL)
		}
	})
}
