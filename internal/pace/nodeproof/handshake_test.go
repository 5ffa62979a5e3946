package nodeproof

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// pace-wire §1.15.4: an accepted proof names both ends to each other and agrees
// on keys both ways; the PROVE-NODE Ok reply is the first sealed frame.
func TestHandshakeAgreesOnPeersAndKeys(t *testing.T) {
	w := newWorld()
	p := handshake(t, w, w.client("n2", nodeKey))
	if p.peer.ID != "n2" || !bytes.Equal(p.peer.Key, nodeKey.Public()) {
		t.Fatalf("server proved %q %x", p.peer.ID, p.peer.Key)
	}
	if s := p.proof.Server; s.ID != "s1" || !bytes.Equal(s.Key, schedulerKey.Public()) {
		t.Fatalf("client proved server %q %x", s.ID, s.Key)
	}
	okReply := wire.AppendReplyHeader(nil, wire.ReplyHeader{Status: wire.StatusOk})
	tag := p.server.AppendTag(nil, okReply)
	if err := p.client.CheckTag(tag, okReply); err != nil {
		t.Fatalf("PROVE-NODE Ok reply: %v", err)
	}
	for i := range 3 {
		f := seal(p.client, wire.OpHeartbeat, []byte("n2"), []byte{byte(i)}, nil)
		if err := open(p.server, f); err != nil {
			t.Fatalf("client->server frame %d: %v", i, err)
		}
		r := p.server.AppendTag(nil, []byte{byte(wire.StatusOk)}, []byte{byte(i)})
		if err := p.client.CheckTag(r, []byte{byte(wire.StatusOk)}, []byte{byte(i)}); err != nil {
			t.Fatalf("server->client frame %d: %v", i, err)
		}
	}
	if got := counts(w.counters); !cmp.Equal(got, map[string]uint64{"pace_node_proofs_accepted_total": 1}) {
		t.Fatalf("counters %v", got)
	}
}

// A node dialling its own scheduler (one machine: worker and scheduler are
// the same node) proves with the same id and key on both ends.
func TestNodeProvesToItself(t *testing.T) {
	w := newWorld()
	p := handshake(t, w, w.client("s1", schedulerKey))
	if p.peer.ID != "s1" {
		t.Fatalf("proved %q", p.peer.ID)
	}
	if err := open(p.server, seal(p.client, wire.OpFetch, []byte("k"))); err != nil {
		t.Fatal(err)
	}
}

// Each connection and each direction gets its own key.
func TestSessionKeysDifferPerConnectionAndDirection(t *testing.T) {
	w := newWorld()
	a := handshake(t, w, w.client("n2", nodeKey))
	b := handshake(t, w, w.client("n2", nodeKey))
	tags := map[string]string{}
	for name, s := range map[string]*Sealer{"a.client": a.client, "a.server": a.server, "b.client": b.client, "b.server": b.server} {
		tag := hex.EncodeToString(s.AppendTag(nil, []byte("same frame")))
		if other, dup := tags[tag]; dup {
			t.Fatalf("%s and %s seal alike", name, other)
		}
		tags[tag] = name
	}
}

// pace-wire §5.5, recomputed by hand from RFC 5869 so that a change of salt,
// info layout or direction byte fails here rather than only between versions.
func TestDeriveSessionKeysMatchesTheDocumentedLayout(t *testing.T) {
	tr := Transcript{ClientID: "n2", ServerID: "s1"}
	for i := range NonceLen {
		tr.ClientNonce[i], tr.ServerNonce[i] = byte(i), byte(0x40+i)
		tr.ClientEphemeral[i], tr.ServerEphemeral[i] = byte(0x80+i), byte(0xc0+i)
	}
	secret := bytes.Repeat([]byte{0x5a}, 32)
	keys, err := DeriveSessionKeys(SealLabel, secret, tr)
	if err != nil {
		t.Fatal(err)
	}
	prefixed := func(b []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) }
	for d, got := range map[byte][SessionKeyLen]byte{1: keys.ClientToServer, 2: keys.ServerToClient} {
		var info []byte
		for _, part := range [][]byte{[]byte(SealLabel), tr.ClientEphemeral[:], tr.ServerEphemeral[:], []byte("n2"), []byte("s1"), {d}} {
			info = append(info, prefixed(part)...)
		}
		prk := hmacSHA256(append(tr.ClientNonce[:], tr.ServerNonce[:]...), secret) // HKDF-Extract
		okm := hmacSHA256(prk, append(info, 1))                                    // HKDF-Expand, one block
		if !bytes.Equal(okm, got[:]) {
			t.Fatalf("direction %d: key %x, layout gives %x", d, got, okm)
		}
	}
}

// The tag is HMAC-SHA256(key, u64 BE seq ‖ header ‖ payload), seq from 0.
func TestTagMatchesTheDocumentedLayout(t *testing.T) {
	var readKey, writeKey [SessionKeyLen]byte
	copy(writeKey[:], "write key")
	s := NewSealer(readKey, writeKey)
	header, payload := []byte{0xFC, 1, 2, 0, 0, 0, 3}, []byte("abc")
	for seq := range uint64(3) {
		want := hmacSHA256(writeKey[:], binary.BigEndian.AppendUint64(nil, seq), header, payload)
		if got := s.AppendTag(nil, header, payload); !bytes.Equal(got, want) {
			t.Fatalf("seq %d: tag %x, want %x", seq, got, want)
		}
	}
}

func hmacSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// Keys never reach a log line or a formatted error.
func TestSessionKeysNeverFormat(t *testing.T) {
	var keys SessionKeys
	copy(keys.ClientToServer[:], bytes.Repeat([]byte{0xab}, SessionKeyLen))
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("derived", "keys", keys)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %x %s", keys, keys, keys, keys, keys), logged.String()} {
		// 0xab is 171: a byte array formatted in decimal shows "171 171" (one "171" alone can
		// be a log line's timestamp).
		if strings.Contains(strings.ToLower(out), "abab") || strings.Contains(out, "171 171") {
			t.Fatalf("key material formatted: %s", out)
		}
	}
}
