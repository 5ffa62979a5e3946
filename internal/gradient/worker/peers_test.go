package worker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestParsePeers(t *testing.T) {
	got, err := ParsePeers([]byte("# project A\nproj-a:tok:en-a\n\n  proj-b : tok-b  \n*:wild\n# end\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.PeerToken{{PeerID: "proj-a", Token: "tok:en-a"}, {PeerID: "proj-b", Token: "tok-b"}, {PeerID: "*", Token: "wild"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestBadPeersLinesNameTheLineNotTheSecret(t *testing.T) {
	for _, in := range []string{"no-colon-secret-xyz", "proj-a:", ":secret-xyz"} {
		_, err := ParsePeers([]byte("# c\n" + in + "\n"))
		if !errors.Is(err, ErrBadPeersFile) || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "secret-xyz") {
			t.Errorf("%q: err = %v", in, err)
		}
	}
}

func TestPeersFileAnswersChallengesWithTheWildcard(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers")
	if err := os.WriteFile(path, []byte("proj-a:tok-a\n*:wild\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pf, err := loadPeersFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := pf.tokens.Answer([]string{"proj-a", "cache-x"})
	want := []wire.PeerToken{{PeerID: "proj-a", Token: "tok-a"}, {PeerID: "cache-x", Token: "wild"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if strings.Contains(pf.tokens.String(), "tok-a") {
		t.Fatalf("tokens leak through String: %s", pf.tokens)
	}
}
