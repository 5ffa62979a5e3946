package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The version agreement frame of gradient-protocol §1.2, the first frame each side sends:
// "GRAD" | oldest u16 LE | newest u16 LE. Its format never changes.

// VersionFrameSize is the exact length of a version frame.
const VersionFrameSize = 8

// CloseProtocolError is the WebSocket close code for failed agreement and oversized
// handshake frames.
const CloseProtocolError = 1002

var versionMagic = [4]byte{'G', 'R', 'A', 'D'}

// ErrNotVersionFrame: the first frame is not 8 bytes starting with GRAD, so the peer predates
// the Proto codec (protocol 26 or older).
var ErrNotVersionFrame = errors.New("not a GRAD version frame")

// AppendVersionFrame appends the version frame announcing r.
func AppendVersionFrame(dst []byte, r VersionRange) []byte {
	dst = append(dst, versionMagic[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, r.Oldest)
	return binary.LittleEndian.AppendUint16(dst, r.Newest)
}

// VersionFrame returns the version frame announcing r.
func VersionFrame(r VersionRange) []byte {
	return AppendVersionFrame(make([]byte, 0, VersionFrameSize), r)
}

// ParseVersionFrame reads the peer's range from its first frame, or returns
// ErrNotVersionFrame.
func ParseVersionFrame(frame []byte) (VersionRange, error) {
	if len(frame) != VersionFrameSize || [4]byte(frame[:4]) != versionMagic {
		return VersionRange{}, ErrNotVersionFrame
	}
	return VersionRange{
		Oldest: binary.LittleEndian.Uint16(frame[4:6]),
		Newest: binary.LittleEndian.Uint16(frame[6:8]),
	}, nil
}

// AgreementError ends a session whose version agreement failed: close with Code and Reason,
// and log Reason at warn level.
type AgreementError struct {
	Code   int
	Reason string
}

func (e *AgreementError) Error() string {
	return fmt.Sprintf("version agreement failed (close %d): %s", e.Code, e.Reason)
}

// PreProtoReason is the close reason for a peer whose first frame is not a version frame.
func PreProtoReason(ours VersionRange) string {
	return fmt.Sprintf("peer protocol is older than %d", ours.Oldest)
}

// NoOverlapReason is the close reason for disjoint ranges.
func NoOverlapReason(ours, peer VersionRange) string {
	return fmt.Sprintf("no shared protocol version: ours %v, peer %v", ours, peer)
}

// Agree picks the version both sides speak: the lower of the two newest versions, provided it
// is not below either side's oldest. Otherwise it returns an *AgreementError.
func Agree(ours, peer VersionRange) (uint16, error) {
	agreed := min(ours.Newest, peer.Newest)
	if agreed < max(ours.Oldest, peer.Oldest) {
		return 0, &AgreementError{Code: CloseProtocolError, Reason: NoOverlapReason(ours, peer)}
	}
	return agreed, nil
}

// AgreeFrame parses the peer's first frame and agrees on a version with ours. Every failure
// is an *AgreementError carrying the close code and the exact reason of
// gradient-protocol §1.2.
func AgreeFrame(ours VersionRange, peerFrame []byte) (uint16, error) {
	peer, err := ParseVersionFrame(peerFrame)
	if err != nil {
		return 0, &AgreementError{Code: CloseProtocolError, Reason: PreProtoReason(ours)}
	}
	return Agree(ours, peer)
}
