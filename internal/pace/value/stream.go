package value

import (
	"fmt"
	"io"
)

// ReadStream reads one value of n bytes from body as a FETCH reply delivers it: the object goes
// to object as it arrives (a hit writes it straight into a temporary file beside its output and
// never holds it whole), and the regions are decoded and returned. buf is the copy buffer, its
// size the caller's choice; nil lets io.CopyBuffer pick.
func ReadStream(body io.Reader, n uint32, object io.Writer, buf []byte) ([]Region, error) {
	var hdr [HeaderLen]byte
	if _, err := io.ReadFull(body, hdr[:]); err != nil {
		return nil, fmt.Errorf("value header: %w", err)
	}
	objLen, err := ParseHeader(hdr[:])
	if err != nil {
		return nil, err
	}
	if uint64(objLen)+HeaderLen+4 > uint64(n) {
		return nil, fmt.Errorf("a %d-byte object in a %d-byte value: %w", objLen, n, ErrNotAValue)
	}
	copied, err := io.CopyBuffer(object, io.LimitReader(body, int64(objLen)), buf)
	if err == nil && copied != int64(objLen) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	rest := make([]byte, uint64(n)-HeaderLen-uint64(objLen))
	if _, err := io.ReadFull(body, rest); err != nil {
		return nil, fmt.Errorf("regions: %w", err)
	}
	return DecodeRegions(rest)
}
