package identity

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Address refusals: what another machine could not dial.
var (
	ErrAddressForm     = errors.New("an address is host:port")
	ErrAddressLoopback = errors.New("a loopback address reaches only this machine")
	ErrAddressWildcard = errors.New("a wildcard address names no machine")
)

// maxAddressLen bounds an endpoint (pace-node §13.15).
const maxAddressLen = 255

// CheckDialable refuses an address another machine could not dial: not
// host:port with a port in 1..65535, no host, a wildcard host, or a
// loopback one (including "localhost"). It does no lookup.
func CheckDialable(addr string) error {
	if addr == "" || len(addr) > maxAddressLen {
		return fmt.Errorf("%w: %q", ErrAddressForm, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrAddressForm, addr, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 || strconv.FormatUint(n, 10) != port {
		return fmt.Errorf("%w: %q has no port in 1..65535", ErrAddressForm, addr)
	}
	if host == "" || host == "*" {
		return fmt.Errorf("%w: %q", ErrAddressWildcard, addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		switch {
		case ip.IsUnspecified():
			return fmt.Errorf("%w: %q", ErrAddressWildcard, addr)
		case ip.IsLoopback():
			return fmt.Errorf("%w: %q", ErrAddressLoopback, addr)
		}
		return nil
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return fmt.Errorf("%w: %q", ErrAddressLoopback, addr)
	}
	if strings.ContainsAny(host, " \t\r\n/@=%") {
		return fmt.Errorf("%w: %q is not a host name", ErrAddressForm, host)
	}
	return nil
}

// PrintIdentity writes what --print-identity prints (pace-node §10.2): the node
// id, the public key text and, when consensusAddr is an address other
// machines can dial, the line an operator admits this node with.
func PrintIdentity(w io.Writer, id *Identity, consensusAddr string) error {
	key := id.Key.PublicText()
	out := fmt.Sprintf("node-id %s\npublic-key %s\n", id.NodeID, key)
	if CheckDialable(consensusAddr) == nil {
		out += fmt.Sprintf("cluster-admit %s=%s@%s\n", id.NodeID, consensusAddr, key)
	}
	_, err := io.WriteString(w, out)
	return err
}
