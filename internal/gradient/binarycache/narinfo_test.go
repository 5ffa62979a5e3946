package binarycache

import (
	"errors"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const (
	testPath = "/nix/store/i8sikl7dcdbp029rxfd7b9s8va9gcl0l-g"
	testHash = "sha256:0p2z2f5yllnnp76x42qwqrqdz4r7i2a8ga23sri6wf2rcfc9ybqy"
)

func TestNarInfoText(t *testing.T) {
	row := store.CachedPath{StorePath: testPath, NarHash: testHash, NarSize: 208, FileHash: testHash, FileSize: 150,
		References: []string{"xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f", "/nix/store/kbn0fyknh13y2b3w7f5rylca4782hhnq-f2"},
		Deriver:    "/nix/store/kbn0fyknh13y2b3w7f5rylca4782hhnq-g.drv", CA: "text:sha256:1fkindmrz6hmzy8l9028n32dydm9p096p47vy20gw931h596w63i"}
	n, err := NarInfoOf(row)
	if err != nil {
		t.Fatal(err)
	}
	n.Signatures = []string{"k-1:c2ln"}
	want := "StorePath: " + testPath + "\n" +
		"URL: nar/0p2z2f5yllnnp76x42qwqrqdz4r7i2a8ga23sri6wf2rcfc9ybqy.nar.zst\n" +
		"Compression: zstd\n" +
		"FileHash: " + testHash + "\nFileSize: 150\n" +
		"NarHash: " + testHash + "\nNarSize: 208\n" +
		"References: kbn0fyknh13y2b3w7f5rylca4782hhnq-f2 xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f\n" +
		"Deriver: kbn0fyknh13y2b3w7f5rylca4782hhnq-g.drv\n" +
		"Sig: k-1:c2ln\n" +
		"CA: text:sha256:1fkindmrz6hmzy8l9028n32dydm9p096p47vy20gw931h596w63i\n"
	if got := n.String(); got != want {
		t.Errorf("narinfo\n got:\n%s\nwant:\n%s", got, want)
	}
}

func TestNarInfoOfRefusesRowsItCannotWriteSafely(t *testing.T) {
	good := store.CachedPath{StorePath: testPath, NarHash: testHash, NarSize: 1, FileHash: testHash, FileSize: 1}
	cases := map[string]func(*store.CachedPath){
		"relative store path":       func(r *store.CachedPath) { r.StorePath = "i8sikl7dcdbp029rxfd7b9s8va9gcl0l-g" },
		"unreadable nar hash":       func(r *store.CachedPath) { r.NarHash = "md5:abc" },
		"unreadable file hash":      func(r *store.CachedPath) { r.FileHash = "" },
		"line break in a reference": func(r *store.CachedPath) { r.References = []string{"xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f\nSig: x"} },
		"not a reference":           func(r *store.CachedPath) { r.References = []string{"nothing"} },
		"line break in the deriver": func(r *store.CachedPath) { r.Deriver = "/nix/store/xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f\nSig: x" },
		"line break in ca":          func(r *store.CachedPath) { r.CA = "fixed:sha256:x\nSig: k:x" },
		"semicolon in the path":     func(r *store.CachedPath) { r.StorePath += ";x" },
	}
	for name, mutate := range cases {
		row := good
		mutate(&row)
		if _, err := NarInfoOf(row); !errors.Is(err, ErrBadRow) {
			t.Errorf("%s: %v, want ErrBadRow", name, err)
		}
	}
}

// FuzzNarInfoOf: whatever a worker managed to record, an accepted row renders as one
// "Key: value" line per field, so no field can forge another (a Sig, a second URL).
func FuzzNarInfoOf(f *testing.F) {
	f.Add(testPath, "xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f", "/nix/store/kbn0fyknh13y2b3w7f5rylca4782hhnq-g.drv", "")
	f.Add(testPath, "x\nSig: y", "", "fixed:r:sha256:abc")
	f.Fuzz(func(t *testing.T, storePath, ref, deriver, ca string) {
		n, err := NarInfoOf(store.CachedPath{StorePath: storePath, NarHash: testHash, FileHash: testHash,
			References: []string{ref}, Deriver: deriver, CA: ca})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSuffix(n.String(), "\n"), "\n") {
			key, _, ok := strings.Cut(line, ": ")
			if !ok || seen[key] {
				t.Fatalf("line %q of an accepted row breaks the format:\n%s", line, n)
			}
			seen[key] = true
		}
	})
}
