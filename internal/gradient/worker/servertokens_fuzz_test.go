package worker_test

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/worker"
)

// FuzzParseServerTokens: any file either parses into lines whose hashes all pass
// peertoken.CheckStored or is refused naming a line, without echoing the file; a parsed file
// never accepts a token for a peer it has no line for when it has no `*` line.
func FuzzParseServerTokens(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, peer, token string) {
		st, err := worker.ParseServerTokens(data)
		if err != nil {
			if !strings.Contains(err.Error(), "line ") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("refusal without a line number: %v", err)
			}
			return
		}
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			n++
			_, hash, _ := strings.Cut(line, ":")
			if err := peertoken.CheckStored(strings.TrimSpace(hash)); err != nil {
				t.Fatalf("accepted a line CheckStored refuses: %v", err)
			}
		}
		if st.Lines() != n {
			t.Fatalf("Lines() = %d, file has %d", st.Lines(), n)
		}
		if !strings.Contains(string(data), peer+":") && !strings.Contains(string(data), "*:") && !strings.Contains(string(data), "*") {
			if v := st.Valid([]wire.PeerToken{{PeerID: peer, Token: token}}); len(v) != 0 {
				t.Fatalf("token for %q accepted without a line for it", peer)
			}
		}
	})
}
