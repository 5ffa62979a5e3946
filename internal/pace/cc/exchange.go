package cc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// exchange sends one request on a fresh connection and reads its terminal reply: LEASE and
// RELEASE (the scheduler sweeps idle connections after 5 s, so each verb gets its own).
func (r *run) exchange(ctx context.Context, addr string, op wire.Op, payload []byte) (wire.Status, []byte, error) {
	nc, err := r.dial(ctx, addr)
	if err != nil {
		return 0, nil, err
	}
	defer nc.Close()
	if r.cfg.Timeout > 0 {
		nc.SetDeadline(time.Now().Add(r.cfg.Timeout))
	}
	br := bufio.NewReader(nc)
	if err := sendWith(nc, br, r.credential(ctx, nc, addr), machineticket.Request(op, payload)); err != nil {
		return 0, nil, fmt.Errorf("%s to %s: %w", op, addr, err)
	}
	return wire.ReadReply(br, op, wire.MaxReportReply, nil)
}

func (r *run) dial(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: r.cfg.ConnectTimeout, KeepAlive: 15 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &dialError{addr: addr, err: err}
	}
	return nc, nil
}

// idleReader reads a COMPILE's replies with two bounds: the whole exchange ends at total, and
// every read (a Progress frame included) must arrive within idle.
type idleReader struct {
	nc    net.Conn
	idle  time.Duration
	total time.Time
}

func (ir *idleReader) Read(p []byte) (int, error) {
	deadline := ir.total
	if ir.idle > 0 {
		if d := time.Now().Add(ir.idle); deadline.IsZero() || d.Before(deadline) {
			deadline = d
		}
	}
	ir.nc.SetReadDeadline(deadline)
	return ir.nc.Read(p)
}
