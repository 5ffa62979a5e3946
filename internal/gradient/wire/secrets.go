package wire

import (
	"fmt"
	"log/slog"
)

// Secret-carrying values redact themselves in fmt and slog output
// (gradient-protocol §3: never log tokens or credentials).

const redacted = "[redacted]"

// String prints the peer but never the token.
func (t PeerToken) String() string { return "(" + t.PeerID + ", " + redacted + ")" }

// String names the peers whose tokens are sent.
func (m *AuthResponse) String() string {
	return fmt.Sprintf("AuthResponse{Tokens:%v}", m.Tokens)
}

// LogValue keeps tokens out of structured logs.
func (m *AuthResponse) LogValue() slog.Value { return slog.StringValue(m.String()) }

// String names the worker and peers but never the tokens.
func (m *Authenticate) String() string {
	return fmt.Sprintf("Authenticate{WorkerID:%s Tokens:%v}", m.WorkerID, m.Tokens)
}

// LogValue keeps tokens out of structured logs.
func (m *Authenticate) LogValue() slog.Value { return slog.StringValue(m.String()) }

// String gives the credential's kind and size, never its bytes.
func (m *Credential) String() string {
	return fmt.Sprintf("Credential{Kind:%v Data:%s %d bytes}", m.Kind, redacted, len(m.Data))
}

// LogValue keeps the credential out of structured logs.
func (m *Credential) LogValue() slog.Value { return slog.StringValue(m.String()) }
