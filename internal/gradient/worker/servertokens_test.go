package worker_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/worker"
)

func TestParseServerTokensRefusesMalformedLines(t *testing.T) {
	good := peertoken.SHA256Hex("t")
	for name, text := range map[string]string{
		"no colon":              "proj-a " + good,
		"empty peer":            ":" + good,
		"empty hash":            "proj-a:",
		"uppercase hex":         "proj-a:" + strings.ToUpper(good),
		"short hex":             "proj-a:" + good[:63],
		"plaintext token":       "proj-a:hunter2",
		"argon2i, not argon2id": "proj-a:$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"phc out of bounds":     "proj-a:$argon2id$v=19$m=4194304,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := worker.ParseServerTokens([]byte("# comment\n\n" + text + "\n"))
			if !errors.Is(err, worker.ErrBadServerTokensFile) || !strings.Contains(err.Error(), "line 3") {
				t.Fatalf("err = %v, want ErrBadServerTokensFile at line 3", err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error repeats the line: %v", err)
			}
		})
	}
}

func TestServerTokensValid(t *testing.T) {
	argon, err := peertoken.HashArgon2id("tok-b", strings.NewReader(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	file := "proj-a:" + peertoken.SHA256Hex("old-a") + "\n" +
		"proj-a:" + peertoken.SHA256Hex("tok-a") + "\n" + // a second line: a token being rotated
		"  proj-b : " + argon + "  \n" +
		"*:" + peertoken.SHA256Hex("shared") + "\n"
	st, err := worker.ParseServerTokens([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines() != 4 || st.Open() {
		t.Fatalf("lines %d open %v", st.Lines(), st.Open())
	}
	pt := func(peer, tok string) wire.PeerToken { return wire.PeerToken{PeerID: peer, Token: tok} }
	cases := []struct {
		name  string
		pairs []wire.PeerToken
		want  []string
	}{
		{"sha256 lines", []wire.PeerToken{pt("proj-a", "tok-a"), pt("proj-a", "old-a")}, []string{"proj-a", "proj-a"}},
		{"argon2 line", []wire.PeerToken{pt("proj-b", "tok-b")}, []string{"proj-b"}},
		{"wildcard for any peer", []wire.PeerToken{pt("proj-z", "shared"), pt("proj-a", "shared")}, []string{"proj-z", "proj-a"}},
		{"another peer's token", []wire.PeerToken{pt("proj-b", "tok-a")}, nil},
		{"stops at the first failure", []wire.PeerToken{pt("proj-a", "tok-a"), pt("proj-b", "x"), pt("proj-b", "tok-b")}, []string{"proj-a"}},
		{"empty token", []wire.PeerToken{pt("proj-a", "")}, nil},
	}
	for _, tc := range cases {
		if got := st.Valid(tc.pairs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Valid = %v, want %v", tc.name, got, tc.want)
		}
	}
	var none worker.ServerTokens
	if got := none.Valid([]wire.PeerToken{pt("proj-a", "tok-a")}); got != nil {
		t.Errorf("zero ServerTokens accepted %v", got)
	}
	if got := worker.OpenServerTokens().Valid([]wire.PeerToken{pt("p", "anything")}); !slices.Equal(got, []string{"p"}) {
		t.Errorf("open ServerTokens: %v", got)
	}
}

func TestServerTokensValidBoundsTheTokenCount(t *testing.T) {
	pairs := make([]wire.PeerToken, 257)
	for i := range pairs {
		pairs[i] = wire.PeerToken{PeerID: "p", Token: "t"}
	}
	if got := worker.OpenServerTokens().Valid(pairs); got != nil {
		t.Fatalf("%d tokens were looked at", len(got))
	}
}
