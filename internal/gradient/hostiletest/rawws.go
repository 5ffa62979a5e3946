package hostiletest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// WebSocket opcodes (RFC 6455, section 5.2).
const (
	OpText   byte = 1
	OpBinary byte = 2
	OpClose  byte = 8
	OpPing   byte = 9
)

// ErrDial marks a connection that could not even be opened: the client's failure, not an
// answer of the server's.
var ErrDial = errors.New("hostiletest: dial")

// Raw is a client WebSocket written byte by byte, so that it can send what no library would:
// a text frame first, a header declaring 2^62 bytes, a frame cut short.
type Raw struct {
	conn net.Conn
	br   *bufio.Reader
}

// DialRaw upgrades a ws:// URL to a WebSocket from the local address laddr ("" for any) and
// returns once the server's 101 has been read. ctx bounds the connect and the upgrade.
func DialRaw(ctx context.Context, wsURL, laddr string) (*Raw, error) {
	return DialRawPipelined(ctx, wsURL, laddr, nil)
}

// DialRawPipelined is DialRaw sending early right behind the upgrade request, before the 101
// arrives, so that the server finds those bytes already buffered with the request.
func DialRawPipelined(ctx context.Context, wsURL, laddr string, early []byte) (*Raw, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, fmt.Errorf("hostiletest: %w", err)
	}
	conn, err := dialFrom(ctx, u.Host, laddr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	r := &Raw{conn: conn, br: bufio.NewReader(conn)}
	if err := r.upgrade(u, early); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return r, nil
}

// dialFrom opens a TCP connection to addr from the local IP laddr ("" for any).
func dialFrom(ctx context.Context, addr, laddr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if laddr != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(laddr)}
	}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrDial, addr, err)
	}
	return c, nil
}

func (r *Raw) upgrade(u *url.URL, early []byte) error {
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	if _, err := r.conn.Write(append([]byte(req), early...)); err != nil {
		return fmt.Errorf("hostiletest: upgrade request: %w", err)
	}
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil {
		return fmt.Errorf("hostiletest: upgrade response: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("hostiletest: upgrade answered %s", resp.Status)
	}
	return nil
}

// Conn is the TCP connection under the WebSocket.
func (r *Raw) Conn() net.Conn { return r.conn }

// Close drops the TCP connection.
func (r *Raw) Close() error { return r.conn.Close() }

// WriteFrame sends one final, masked frame.
func (r *Raw) WriteFrame(op byte, payload []byte) error {
	_, err := r.conn.Write(FrameBytes(op, payload))
	return err
}

// WriteHeader sends only the masked header of a final frame declaring n payload bytes.
func (r *Raw) WriteHeader(op byte, n uint64) error {
	_, err := r.conn.Write(Header(op, n))
	return err
}

// FrameBytes is one final, masked frame carrying payload.
func FrameBytes(op byte, payload []byte) []byte {
	return append(Header(op, uint64(len(payload))), payload...) // the mask key is zero
}

// Header is a final, masked frame header declaring n payload bytes, with a zero mask key.
func Header(op byte, n uint64) []byte {
	h := []byte{0x80 | op}
	switch {
	case n < 126:
		h = append(h, 0x80|byte(n))
	case n <= 0xffff:
		h = append(h, 0x80|126)
		h = binary.BigEndian.AppendUint16(h, uint16(n))
	default:
		h = append(h, 0x80|127)
		h = binary.BigEndian.AppendUint64(h, n)
	}
	return append(h, 0, 0, 0, 0)
}

// Frame is one frame the server sent.
type Frame struct {
	Op      byte
	Payload []byte
}

// CloseCode is a close frame's code and reason (1005, "" when it carries none).
func (f Frame) CloseCode() (int, string) {
	if len(f.Payload) < 2 {
		return 1005, ""
	}
	return int(binary.BigEndian.Uint16(f.Payload)), string(f.Payload[2:])
}

// maxServerFrame bounds what ReadFrame accepts, so a broken server cannot make it allocate.
const maxServerFrame = 16 << 20

// ReadFrame reads the server's next frame (unmasked, as servers send them) within d.
func (r *Raw) ReadFrame(d time.Duration) (Frame, error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(d))
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		return Frame{}, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r.br, b[:]); err != nil {
			return Frame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r.br, b[:]); err != nil {
			return Frame{}, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > maxServerFrame || h[1]&0x80 != 0 {
		return Frame{}, errors.New("hostiletest: server frame too big or masked")
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r.br, p); err != nil {
		return Frame{}, err
	}
	return Frame{Op: h[0] & 0x0f, Payload: p}, nil
}
