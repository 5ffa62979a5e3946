package cc

import (
	"bufio"
	"context"
	"net"

	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
)

// credential is what goes ahead of a dispatch verb sent to nc: nothing on this machine (a
// loopback peer is admitted by the node it reaches), otherwise an AUTH frame presenting a
// machine ticket for audience that this machine's own node (at PACE_ADDR) mints
// (pace-node §8.2). When nothing there mints one (no node, or a pace-kv), the verb goes without: the
// other machine may admit any caller (--fleet-open), and if it refuses, the compile happens
// here as for any refusal.
func (r *run) credential(ctx context.Context, nc net.Conn, audience string) []byte {
	if tcp, ok := nc.RemoteAddr().(*net.TCPAddr); !ok || tcp.IP.IsLoopback() || r.cfg.Addr == "" {
		return nil
	}
	ticket, err := machineticket.Mint(ctx, r.cfg.Addr, audience, r.cfg.ConnectTimeout+r.cfg.Timeout)
	if err != nil {
		r.verbosef("no machine ticket for %s: %v", audience, err)
		return nil
	}
	return machineticket.Auth(ticket)
}

// sendWith writes request on nc behind cred and, when there was one, reads the AUTH reply
// first, so the caller reads its own verb's reply next.
func sendWith(nc net.Conn, br *bufio.Reader, cred, request []byte) error {
	if _, err := nc.Write(append(cred, request...)); err != nil {
		return err
	}
	if cred == nil {
		return nil
	}
	return machineticket.ReadAuthReply(br)
}
