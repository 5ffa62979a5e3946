package wire

import (
	"fmt"
	"io"
	"net"
)

// drainChunk bounds one discard step, so draining never buffers more than
// this, whatever a peer declared.
const drainChunk = 256 << 10

// ReadRequestHeader reads one request header. A clean end of stream before
// any byte is io.EOF; a partial header is io.ErrUnexpectedEOF. scratch
// lets a caller read without allocating.
func ReadRequestHeader(r io.Reader, scratch *[RequestHeaderLen]byte) (RequestHeader, error) {
	if _, err := io.ReadFull(r, scratch[:]); err != nil {
		return RequestHeader{}, err
	}
	return ParseRequestHeader(scratch[:])
}

// ReadReplyHeader reads one reply header (see ReadRequestHeader).
func ReadReplyHeader(r io.Reader, scratch *[ReplyHeaderLen]byte) (ReplyHeader, error) {
	if _, err := io.ReadFull(r, scratch[:]); err != nil {
		return ReplyHeader{}, err
	}
	return ParseReplyHeader(scratch[:])
}

// discarder is implemented by *bufio.Reader.
type discarder interface {
	Discard(n int) (int, error)
}

// Drain discards exactly n bytes from r in bounded chunks, never holding
// more than one chunk. A stream that ends early is io.ErrUnexpectedEOF.
func Drain(r io.Reader, n uint64) error {
	if d, ok := r.(discarder); ok {
		for n > 0 {
			step := int(min(n, drainChunk))
			got, err := d.Discard(step)
			n -= uint64(got)
			if err != nil {
				return unexpected(err)
			}
		}
		return nil
	}
	for n > 0 {
		step := int64(min(n, drainChunk))
		got, err := io.CopyN(io.Discard, r, step)
		n -= uint64(got)
		if err != nil {
			return unexpected(err)
		}
	}
	return nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// AppendRequest appends a whole request frame for op whose payload is the
// given fields, at this build's Version.
func AppendRequest(dst []byte, op Op, fields ...[]byte) []byte {
	size := 0
	for _, f := range fields {
		size += FieldPrefixLen + len(f)
	}
	dst = AppendRequestHeader(dst, NewRequestHeader(op, uint32(size)))
	for _, f := range fields {
		dst = AppendField(dst, f)
	}
	return dst
}

// AppendReply appends a whole reply frame.
func AppendReply(dst []byte, status Status, payload []byte) []byte {
	dst = AppendReplyHeader(dst, ReplyHeader{Status: status, PayloadLen: uint32(len(payload))})
	return append(dst, payload...)
}

// AppendRefusalReply appends an Error reply frame carrying r.
func AppendRefusalReply(dst []byte, r Refusal) []byte {
	n := ErrorPayloadLen(r)
	dst = AppendReplyHeader(dst, ReplyHeader{Status: StatusError, PayloadLen: uint32(n)})
	return AppendErrorPayload(dst, r)
}

// WriteReply writes header and payload as one net.Buffers write, which a
// *net.TCPConn turns into a single writev.
func WriteReply(w io.Writer, status Status, payload []byte) error {
	var hdr [ReplyHeaderLen]byte
	PutReplyHeader(hdr[:], ReplyHeader{Status: status, PayloadLen: uint32(len(payload))})
	bufs := net.Buffers{hdr[:], payload}
	_, err := bufs.WriteTo(w)
	return err
}

// WriteReplyBody writes a reply whose payload is length bytes streamed
// from body, without holding them in memory. Copying goes through
// io.CopyN, so a *net.TCPConn destination with an *os.File body uses
// sendfile. A body that ends early is io.ErrUnexpectedEOF: the stream is
// then out of sync and the caller must close it.
func WriteReplyBody(w io.Writer, status Status, length uint32, body io.Reader) error {
	var hdr [ReplyHeaderLen]byte
	PutReplyHeader(hdr[:], ReplyHeader{Status: status, PayloadLen: length})
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := io.CopyN(w, body, int64(length)); err != nil {
		return fmt.Errorf("reply body: %w", unexpected(err))
	}
	return nil
}

// CheckReplyHeader judges a reply header at the client: the status must be
// legal for the op and the payload within the op's reply ceiling (or the
// client's own cap where the table leaves it unbounded).
func CheckReplyHeader(info OpInfo, h ReplyHeader, clientCap uint32) error {
	if !info.Statuses.Has(h.Status) {
		return fmt.Errorf("%w: %s answered %s", ErrIllegalStatus, info.Name, h.Status)
	}
	if limit := info.ReplyLimit(clientCap); h.PayloadLen > limit {
		return fmt.Errorf("%w: %s reply of %d bytes, ceiling %d", ErrReplyTooLarge, info.Name, h.PayloadLen, limit)
	}
	return nil
}
