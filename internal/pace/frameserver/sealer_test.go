package frameserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// seqSealer is a test Sealer: HMAC-SHA256 per direction over a running
// sequence number, the shape pace-wire §1.15.4 describes.
type seqSealer struct {
	readKey, writeKey []byte
	readSeq, writeSeq uint64
}

func macFor(key []byte, seq uint64) hash.Hash {
	m := hmac.New(sha256.New, key)
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	m.Write(s[:])
	return m
}

func (s *seqSealer) NextReadMAC() hash.Hash  { s.readSeq++; return macFor(s.readKey, s.readSeq) }
func (s *seqSealer) NextWriteMAC() hash.Hash { s.writeSeq++; return macFor(s.writeKey, s.writeSeq) }

var (
	clientToServer = []byte("client->server key")
	serverToClient = []byte("server->client key")
)

// sealingHandler installs a sealer on NODE-CHALLENGE and echoes FETCH.
func sealingHandler() Handler {
	return HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		if req.Op() == wire.OpNodeChallenge {
			c.InstallSealer(&seqSealer{readKey: clientToServer, writeKey: serverToClient})
			return Ok([]byte("proven"))
		}
		return Ok(req.Fields[0])
	})
}

// sealedClient tags what it sends and checks what it reads.
type sealedClient struct {
	*client
	peer seqSealer // from the client's side: write = client->server
}

func (s *sealedClient) sendSealed(frame []byte, corrupt bool) {
	m := s.peer.NextWriteMAC()
	m.Write(frame)
	tag := m.Sum(nil)
	if corrupt {
		tag[0] ^= 1
	}
	s.send(frame, tag)
}

func (s *sealedClient) readSealed(t *testing.T) (wire.Status, []byte) {
	t.Helper()
	var scratch [wire.ReplyHeaderLen]byte
	h, err := wire.ReadReplyHeader(s.br, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, h.PayloadLen)
	tag := make([]byte, wire.SealTagLen)
	if _, err := io.ReadFull(s.br, payload); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(s.br, tag); err != nil {
		t.Fatal(err)
	}
	m := s.peer.NextReadMAC()
	m.Write(scratch[:])
	m.Write(payload)
	if !hmac.Equal(m.Sum(nil), tag) {
		t.Fatal("reply tag does not verify")
	}
	return h.Status, payload
}

func TestSealedConnection(t *testing.T) {
	obs := newCountingObserver()
	_, addr := startServer(t, Config{Handler: sealingHandler(), Observer: obs})
	c := &sealedClient{client: dial(t, addr), peer: seqSealer{readKey: serverToClient, writeKey: clientToServer}}
	c.send(wire.AppendRequest(nil, wire.OpNodeChallenge, make([]byte, 32), make([]byte, 32)))
	// The reply that installs the sealer is the first sealed frame.
	if status, payload := c.readSealed(t); status != wire.StatusOk || string(payload) != "proven" {
		t.Fatalf("challenge reply %s %q", status, payload)
	}
	c.sendSealed(fetch("sealed-1"), false)
	if _, payload := c.readSealed(t); string(payload) != "sealed-1" {
		t.Fatalf("sealed echo %q", payload)
	}
	// A refused frame is drained through the MAC; the stream stays in step.
	c.sendSealed(rawFrame(1, 0x99, 3, []byte("abc")), false)
	if status, payload := c.readSealed(t); status != wire.StatusError || wire.Code(payload[0]) != wire.CodeUnknownOpcode {
		t.Fatalf("sealed refusal %s %q", status, payload)
	}
	c.sendSealed(fetch("sealed-2"), false)
	if _, payload := c.readSealed(t); string(payload) != "sealed-2" {
		t.Fatalf("sealed echo after refusal %q", payload)
	}
	c.sendSealed(fetch("tampered"), true)
	c.expectClosed()
	if r := obs.waitClosed(t); r != ClosedBadTag {
		t.Fatalf("closed for %s, want bad_tag", r)
	}
}
