package wire

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretsNeverPrint(t *testing.T) {
	const secret = "s3cr3t-token"
	msgs := []Message{
		&AuthResponse{Tokens: []PeerToken{{PeerID: "peer-a", Token: secret}}},
		&Authenticate{WorkerID: "w", Tokens: []PeerToken{{PeerID: "peer-a", Token: secret}}},
		&Credential{Kind: CredentialKindSSHKey, Data: []byte(secret)},
	}
	for _, m := range msgs {
		var logged bytes.Buffer
		slog.New(slog.NewTextHandler(&logged, nil)).Info("sent", "msg", m)
		for _, out := range []string{fmt.Sprint(m), fmt.Sprintf("%+v", m), logged.String()} {
			if strings.Contains(out, secret) {
				t.Errorf("%T leaks its secret: %s", m, out)
			}
		}
	}
}
