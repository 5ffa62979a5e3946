package fleet

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what a command or snapshot may carry (pace-node §13.15).
const (
	// MaxIDLen bounds a member id in bytes.
	MaxIDLen = 64
	// MaxEndpointLen bounds an endpoint ("host:port") in bytes.
	MaxEndpointLen = 255
	// ClusterIDLen is the length of a cluster id: 128 bits as lowercase hex.
	ClusterIDLen = 32
)

var (
	errIDEmpty     = errors.New("a member id is empty")
	errIDTooLong   = fmt.Errorf("a member id is longer than %d bytes", MaxIDLen)
	errIDNotUTF8   = errors.New("a member id is not valid UTF-8")
	errIDCharacter = errors.New("a member id holds a space, a control character or '='")
)

// CheckMemberID refuses an id a member record cannot hold: empty, longer
// than MaxIDLen bytes, not UTF-8, holding white space or control characters
// (it is printed in logs and status tables), or '=' (the admit grammar
// "<id>=<host>:<port>" splits on it).
func CheckMemberID(id string) error {
	switch {
	case id == "":
		return errIDEmpty
	case len(id) > MaxIDLen:
		return errIDTooLong
	case !utf8.ValidString(id):
		return errIDNotUTF8
	case strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '=' }) >= 0:
		return errIDCharacter
	}
	if RaftID(id) == 0 {
		// 1 id in 2^64 maps to raft's "no node"; refusing it keeps RaftID total.
		return fmt.Errorf("member id %q maps to raft id 0; choose another id", id)
	}
	return nil
}

// CheckClusterID accepts exactly 32 lowercase hex digits.
func CheckClusterID(id string) error {
	if len(id) != ClusterIDLen {
		return fmt.Errorf("cluster id %q is not %d hex digits", id, ClusterIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("cluster id %q is not lowercase hex", id)
		}
	}
	return nil
}

// CheckEndpoint accepts "host:port" with a non-empty host, a decimal port in
// 1..65535, valid UTF-8 without spaces or control characters, at most
// MaxEndpointLen bytes. It does no name resolution.
func CheckEndpoint(ep string) error {
	if len(ep) > MaxEndpointLen {
		return fmt.Errorf("endpoint is longer than %d bytes", MaxEndpointLen)
	}
	if !utf8.ValidString(ep) || strings.IndexFunc(ep, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("endpoint %q holds a space, a control character or invalid UTF-8", ep)
	}
	host, port, err := net.SplitHostPort(ep)
	if err != nil || host == "" {
		return fmt.Errorf("endpoint %q is not host:port", ep)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 || port[0] == '0' {
		return fmt.Errorf("endpoint %q has no port in 1..65535", ep)
	}
	return nil
}

// checkOptEndpoint accepts "" (absent) or a valid endpoint.
func checkOptEndpoint(ep string) error {
	if ep == "" {
		return nil
	}
	return CheckEndpoint(ep)
}

// raftIDLabel domain-separates the raft id hash from every other use of
// SHA-256 over a member id.
const raftIDLabel = "pace-raft-id-v1\x00"

// RaftID derives the Raft node id of a member: the first 8 bytes, big
// endian, of SHA-256("pace-raft-id-v1\x00" ‖ id). Every node computes it
// the same way, so a Raft message's sender maps back to exactly one member
// of the applied state; two member ids that collide are refused at
// admission (Validate), and an id that maps to 0 (raft's "none") is refused
// by CheckMemberID.
func RaftID(id string) uint64 {
	h := sha256.New()
	h.Write([]byte(raftIDLabel))
	h.Write([]byte(id))
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}
