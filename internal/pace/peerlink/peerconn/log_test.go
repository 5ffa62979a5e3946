package peerconn

import (
	"encoding/base64"
	"encoding/hex"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/peerlink"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// handshakeSecrets are the fields of the handshake frames in b at least 32
// bytes long: nonces, ephemeral keys, signatures.
func handshakeSecrets(t *testing.T, b []byte) [][]byte {
	var out [][]byte
	for len(b) >= peerlink.HeaderLen {
		h, err := peerlink.ParseHeader(b, 0)
		if err != nil || h.Kind == peerlink.KindMessage {
			break
		}
		payload := b[peerlink.HeaderLen : peerlink.HeaderLen+int(h.Len)]
		n, err := wire.CountFields(payload)
		if err != nil {
			t.Fatal(err)
		}
		fields, _ := wire.SplitFields(nil, payload, n)
		for _, f := range fields {
			if len(f) >= 32 {
				out = append(out, f)
			}
		}
		b = b[peerlink.HeaderLen+int(h.Len):]
	}
	return out
}

// refuseAndTap connects dial to acc, ends an accepted link with a tag that
// fails, and returns the handshake fields that crossed.
func refuseAndTap(t *testing.T, acc, dial *node, target string) [][]byte {
	a, b := net.Pipe()
	ta, tb := &tap{Conn: a}, &tap{Conn: b}
	r := connect(t, acc, dial, target, peerlink.LearnerToVoter, ta, tb)
	if r.accepted != nil && r.dialled != nil {
		ta.arm()
		go r.accepted.WriteMessage([]byte("MsgApp"))
		r.dialled.ReadMessage()
	}
	return append(handshakeSecrets(t, ta.since(0)), handshakeSecrets(t, tb.since(0))...)
}

// encodings are the ways a byte string could be printed.
func encodings(b []byte) []string {
	return []string{hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), string(b)}
}

// No log line of either end, whatever the refusal, carries a nonce, an
// ephemeral key or a signature that crossed the wire; a claimed id nobody
// proved is not printed; a revoked key is printed whole.
func TestLogLinesCarryNoSecrets(t *testing.T) {
	scenarios := []struct {
		name      string
		acc, dial func(t *testing.T) *node
		target    string
	}{
		{"stranger", v1, func(t *testing.T) *node { return newNode(t, "x9", strangerKey, newRoster()) }, "v1"},
		{"impostor", v1, func(t *testing.T) *node { return newNode(t, "v2", strangerKey, newRoster()) }, "v1"},
		{"revoked", v1, func(t *testing.T) *node { return newNode(t, "r1", r1Key, newRoster()) }, "v1"},
		{"wrong target", v1, l1, "v2"},
		{"own id", v1, func(t *testing.T) *node { return newNode(t, "v1", v1Key, newRoster()) }, "v3"},
		{"acceptor impostor", func(t *testing.T) *node { return newNode(t, "v1", strangerKey, newRoster()) }, l1, "v1"},
		{"accepted, then a bad tag", v1, l1, "v1"},
	}
	var logs []string
	var secrets [][]byte
	for _, sc := range scenarios {
		acc, dial := sc.acc(t), sc.dial(t)
		secrets = append(secrets, refuseAndTap(t, acc, dial, sc.target)...)
		logs = append(logs, acc.logs.String(), dial.logs.String())
		if sc.name == "stranger" && strings.Contains(acc.logs.String(), "x9") {
			t.Errorf("an unproven id was logged: %s", acc.logs.String())
		}
		if sc.name == "revoked" && !strings.Contains(acc.logs.String(), edkey.Text(r1Key.Public())) {
			t.Errorf("the revoked key is not logged whole: %s", acc.logs.String())
		}
	}
	all := strings.Join(logs, "")
	if len(secrets) < 10 || !strings.Contains(all, "wrong-target") || !strings.Contains(all, "frame-tag") {
		t.Fatalf("the scenarios did not run: %d secrets, logs:\n%s", len(secrets), all)
	}
	t.Log(all)
	for _, s := range secrets {
		for _, enc := range encodings(s) {
			if strings.Contains(all, enc) {
				t.Fatalf("a handshake field reached the log as %q:\n%s", enc, all)
			}
		}
	}
}

// pace-consensus §7.3.5: refusals before an id is proven are logged at
// most once a minute, saying how many were held back; a revoked key and
// refusals after proof are logged every time.
func TestUnprovenRefusalsAreLoggedOnceAMinute(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	acc := newNode(t, "v1", v1Key, newRoster(), func(c *Config) { c.Now = clk.Now })
	stranger := newNode(t, "x9", strangerKey, newRoster())
	removed := newNode(t, "r1", r1Key, newRoster())
	for range 3 {
		overPipe(t, acc, stranger, "v1", peerlink.LearnerToVoter)
		overPipe(t, acc, removed, "v1", peerlink.LearnerToVoter)
	}
	clk.Advance(UnprovenLogInterval)
	overPipe(t, acc, stranger, "v1", peerlink.LearnerToVoter)
	lines := strings.Split(strings.TrimSpace(acc.logs.String()), "\n")
	var unproven, revoked []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "reason=unknown-key"):
			unproven = append(unproven, l)
		case strings.Contains(l, "reason=revoked-key"):
			revoked = append(revoked, l)
		}
	}
	if len(unproven) != 2 || strings.Contains(unproven[0], "held_back") || !strings.Contains(unproven[1], "held_back=2") {
		t.Fatalf("unproven lines: %q", unproven)
	}
	if len(revoked) != 3 || !strings.Contains(revoked[0], "member=r1") {
		t.Fatalf("revoked lines: %q", revoked)
	}
	if got := acc.counts()["connections_refused_unknown_key_total"]; got != 4 {
		t.Fatalf("counted %d", got)
	}
}
