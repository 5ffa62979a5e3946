package discoverywire

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz seed corpora from the fixture")

// FuzzParse: any bytes are judged without panicking, nothing longer than MaxDatagram is
// accepted, and what is accepted is the one encoding of what was read.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(b)
		if err != nil {
			return
		}
		if len(b) > MaxDatagram {
			t.Fatalf("accepted %d bytes", len(b))
		}
		var again []byte
		switch d.Kind {
		case KindBeacon:
			again = AppendBeacon(nil, d.Beacon.Summary)
		case KindChallenge:
			again, err = AppendChallenge(nil, d.Challenge, len(b))
		case KindProof:
			again = AppendProof(nil, d.Proof)
		}
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("accepted %x as %+v, which encodes as %x (%v)", b, d, again, err)
		}
	})
}

// FuzzVerifyProof: whatever arrives as a proof, it verifies only if it is the genuine one.
func FuzzVerifyProof(f *testing.F) {
	genuine := genuineExchange(f).proof
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(b)
		if err != nil || d.Kind != KindProof {
			return
		}
		if d.Proof.Verify(sampleChallenge().ClusterID) && !bytes.Equal(b, genuine) {
			t.Fatalf("a proof that was never signed verifies: %x", b)
		}
	})
}

// seedCorpora are the committed seeds: each genuine datagram and its damaged neighbours,
// so that every run reaches both the accepting and the refusing paths.
func seedCorpora(t testing.TB) map[string]map[string]string {
	x := genuineExchange(t)
	parse := map[string]string{
		"other-version": seedFile(append(AppendHeader(nil, KindBeacon)[:4], 2, 1)),
		"bad-magic":     seedFile([]byte("GET / HTTP/1.1")),
		"header-only":   seedFile(AppendHeader(nil, KindProof)),
	}
	for kind, b := range map[string][]byte{"beacon": x.beacon, "challenge": x.challenge, "proof": x.proof} {
		for name, seed := range damaged(b) {
			parse[kind+"-"+name] = seed
		}
	}
	return map[string]map[string]string{"FuzzParse": parse, "FuzzVerifyProof": damaged(x.proof)}
}

func damaged(genuine []byte) map[string]string {
	flipped := func(i int) []byte {
		c := bytes.Clone(genuine)
		c[i] ^= 0x01
		return c
	}
	return map[string]string{
		"genuine":        seedFile(genuine),
		"flipped-first":  seedFile(flipped(0)),
		"flipped-middle": seedFile(flipped(len(genuine) / 2)),
		"flipped-last":   seedFile(flipped(len(genuine) - 1)),
		"truncated":      seedFile(genuine[:len(genuine)-1]),
		"empty":          seedFile(nil),
	}
}

func seedFile(b []byte) string {
	return "go test fuzz v1\n" + fmt.Sprintf("[]byte(%s)\n", strconv.Quote(string(b)))
}

// The committed seeds are the fixture's: a change to the codec that leaves them stale (so
// no seed reaches the accepting path) fails here.
// Rewrite them with: go test -run TestFuzzSeedsAreCurrent -update-seeds
func TestFuzzSeedsAreCurrent(t *testing.T) {
	for target, seeds := range seedCorpora(t) {
		for name, want := range seeds {
			path := filepath.Join("testdata", "fuzz", target, name)
			if *updateSeeds {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				t.Errorf("%s is stale or missing (%v); rerun with -update-seeds", path, err)
			}
		}
	}
}
