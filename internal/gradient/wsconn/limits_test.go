package wsconn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// logChunkOfSize is a LogChunk that encodes to exactly size bytes at version 30.
func logChunkOfSize(t *testing.T, size int) *wire.LogChunk {
	t.Helper()
	empty, err := wire.Encode(&wire.LogChunk{JobID: "job"}, 30)
	if err != nil {
		t.Fatal(err)
	}
	base := len(empty) - 1 // everything but the data length varint (1 byte for 0)
	for varintLen := 1; varintLen <= binary.MaxVarintLen64; varintLen++ {
		n := size - base - varintLen
		if n >= 0 && len(binary.AppendUvarint(nil, uint64(n))) == varintLen {
			m := &wire.LogChunk{JobID: "job", Data: bytes.Repeat([]byte{'x'}, n)}
			if frame, err := wire.Encode(m, 30); err != nil || len(frame) != size {
				t.Fatalf("LogChunk sized for %d encodes to %d bytes (%v)", size, len(frame), err)
			}
			return m
		}
	}
	t.Fatalf("no LogChunk encodes to %d bytes", size)
	return nil
}

// gradient-protocol §1.3: during the handshake every frame is capped at 64 KiB; a bigger one
// closes with 1002 and is never decoded (a valid LogChunk one byte over is refused, one at
// the cap is read).
func TestHandshakeFrameCap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		frameSize int
		wantClose bool
	}{
		{"at the cap", wire.MaxHandshakeMessageSize, false},
		{"one byte over", wire.MaxHandshakeMessageSize + 1, true},
		{"65 KiB", 65 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, accepted := serveWorkers(t, Options{})
			raw := rawDial(t, url)
			reads := raw.reading()
			raw.write(wire.VersionFrame(wire.ProtoVersions()))
			raw.writeMessage(logChunkOfSize(t, tc.frameSize))
			server := acceptOne(t, accepted)

			m, release, err := server.Read(testCtx(t))
			defer release()
			if !tc.wantClose {
				if lc, ok := m.(*wire.LogChunk); err != nil || !ok || len(lc.Data) == 0 {
					t.Fatalf("Read = %T, %v; want the LogChunk", m, err)
				}
				return
			}
			if !errors.Is(err, ErrMessageTooBig) || m != nil {
				t.Fatalf("Read = %T, %v; want ErrMessageTooBig and no message", m, err)
			}
			reads.next(t) // our version frame
			assertClosed(t, reads, CloseProtocolError, fmt.Sprintf("handshake message over %d bytes", wire.MaxHandshakeMessageSize))
		})
	}
}

// The cap also covers the first frame: 65 KiB of garbage where the version frame belongs
// closes with the size reason, not the pre-Proto one.
func TestOversizedFirstFrameIsNotParsed(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	reads := raw.reading()
	raw.write(append([]byte("GRAD\x1e\x00\x1e\x00"), make([]byte, 65<<10)...))
	server := acceptOne(t, accepted)

	_, err := server.Agree(testCtx(t))
	if !errors.Is(err, ErrMessageTooBig) {
		t.Fatalf("Agree = %v, want ErrMessageTooBig", err)
	}
	reads.next(t)
	assertClosed(t, reads, CloseProtocolError, "handshake message over 65536 bytes")
}

// gradient-protocol §1.3/gradient-protocol §1.4: after EnterSession the cap is the session's
// (8 MiB, 2 MiB on cache sessions) and a bigger frame closes with 1009. Frames at the cap
// pass.
func TestSessionFrameCap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int // Options.SessionReadLimit; 0 is the default
		cap   int
	}{
		{"proto session", 0, wire.MaxProtoMessageSize},
		{"cache session", wire.SafeInflightMessageSize, wire.SafeInflightMessageSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, accepted := serveWorkers(t, Options{SessionReadLimit: tc.limit})
			raw := rawDial(t, url)
			reads := raw.reading()
			raw.write(wire.VersionFrame(wire.ProtoVersions()))
			server := acceptOne(t, accepted)
			if _, err := server.Agree(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			server.EnterSession()
			atCap, err := wire.Encode(logChunkOfSize(t, tc.cap), 30)
			if err != nil {
				t.Fatal(err)
			}
			written := raw.writeAsync(atCap, make([]byte, tc.cap+1))

			m, release, err := server.Read(testCtx(t))
			if lc, ok := m.(*wire.LogChunk); err != nil || !ok || len(lc.Data) < tc.cap-64 {
				t.Fatalf("Read of a frame at the cap = %T, %v", m, err)
			}
			release()
			if _, _, err := server.Read(testCtx(t)); !errors.Is(err, ErrMessageTooBig) {
				t.Fatalf("Read of a frame over the cap = %v, want ErrMessageTooBig", err)
			}
			reads.next(t)
			assertClosed(t, reads, CloseMessageTooBig, fmt.Sprintf("message over %d bytes", tc.cap))
			<-written // the rest of the oversized frame may or may not have been taken
		})
	}
}

// Send refuses a message over the session cap instead of letting the peer close the session.
func TestSendRefusesMessagesOverTheSessionCap(t *testing.T) {
	url, accepted := serveWorkers(t, Options{SessionReadLimit: wire.SafeInflightMessageSize})
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	agreeBoth(t, worker, server)

	err := server.Send(testCtx(t), &wire.NarPush{Data: make([]byte, wire.SafeInflightMessageSize)})
	if !errors.Is(err, ErrMessageTooBig) {
		t.Fatalf("Send = %v, want ErrMessageTooBig", err)
	}
	if err := server.Send(testCtx(t), &wire.NarPush{Data: make([]byte, wire.BulkChunkSize)}); err != nil {
		t.Fatalf("Send of a normal chunk after a refusal = %v", err)
	}
}

// A frame that does not decode is reported as a DecodeError and leaves the socket usable, so
// the session can answer "400 malformed message".
func TestDecodeErrorKeepsSocketOpen(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	raw.reading()
	raw.write(wire.VersionFrame(wire.ProtoVersions()))
	raw.write([]byte{0xff, 0xff, 0x01})
	raw.writeMessage(&wire.RequestJob{Kind: wire.JobKindFlake})
	server := acceptOne(t, accepted)

	_, _, err := server.Read(testCtx(t))
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("Read of garbage = %v, want a *wire.DecodeError", err)
	}
	m, release, err := server.Read(testCtx(t))
	defer release()
	if _, ok := m.(*wire.RequestJob); err != nil || !ok {
		t.Fatalf("Read after a decode error = %T, %v", m, err)
	}
}
