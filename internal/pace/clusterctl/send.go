package clusterctl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// maxRedirects is how many not-leader answers a verb follows.
const maxRedirects = 2

// Options say where a verb goes and how it proves this machine.
type Options struct {
	// Schedulers are tried in order until one connects (default 127.0.0.1:6674).
	Schedulers []string
	// LocalNode is this machine's own node, which mints the ticket a verb presents to
	// another machine; empty sends no ticket.
	LocalNode string
	// Timeout bounds each connect and each exchange (default 15 s).
	Timeout time.Duration
}

// Answer is what the node that applied (or reported) the verb said.
type Answer struct {
	From string // the endpoint that answered
	Body []byte // the Ok payload
}

// Send sends v and returns the answer, following not-leader. A refusal comes back as a
// wire.Refusal error naming its code.
func Send(ctx context.Context, opts Options, v Verb) (Answer, error) {
	opts = opts.withDefaults()
	addr, nc, err := firstThatConnects(ctx, opts)
	if err != nil {
		return Answer{}, err
	}
	for hop := 0; ; hop++ {
		body, err := exchange(ctx, opts, nc, addr, v)
		nc.Close()
		var ref wire.Refusal
		if !errors.As(err, &ref) || ref.Code != wire.CodeNotLeader || ref.Message == "" || hop == maxRedirects {
			return Answer{From: addr, Body: body}, err
		}
		addr = ref.Message // the leader's scheduler endpoint
		if nc, err = dial(ctx, addr, opts.Timeout); err != nil {
			return Answer{}, fmt.Errorf("%s is not the leader and named %s, which does not answer: %w", addr, ref.Message, err)
		}
	}
}

func (o Options) withDefaults() Options {
	if len(o.Schedulers) == 0 {
		o.Schedulers = []string{"127.0.0.1:6674"}
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	return o
}

// firstThatConnects dials the schedulers in order.
func firstThatConnects(ctx context.Context, opts Options) (string, net.Conn, error) {
	var errs []error
	for _, addr := range opts.Schedulers {
		nc, err := dial(ctx, addr, opts.Timeout)
		if err == nil {
			return addr, nc, nil
		}
		errs = append(errs, err)
	}
	return "", nil, fmt.Errorf("no scheduler answered: %w", errors.Join(errs...))
}

func dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.DialContext(ctx, "tcp", addr)
}

// exchange sends v on nc, behind a machine ticket when nc leads to another machine.
func exchange(ctx context.Context, opts Options, nc net.Conn, addr string, v Verb) ([]byte, error) {
	nc.SetDeadline(time.Now().Add(opts.Timeout))
	var out []byte
	ticketed := false
	if opts.LocalNode != "" && !loopback(nc.RemoteAddr()) {
		ticket, err := machineticket.Mint(ctx, opts.LocalNode, addr, opts.Timeout)
		if err != nil {
			return nil, fmt.Errorf("%s is another machine and cluster verbs need an identified caller: %w", addr, err)
		}
		out, ticketed = machineticket.Auth(ticket), true
	}
	out = append(out, machineticket.Request(v.Op, v.payload())...)
	if _, err := nc.Write(out); err != nil {
		return nil, fmt.Errorf("sending to %s: %w", addr, err)
	}
	r := bufio.NewReader(nc)
	if ticketed {
		if err := machineticket.ReadAuthReply(r); err != nil {
			return nil, fmt.Errorf("%s refused this machine's ticket: %w", addr, err)
		}
	}
	_, body, err := wire.ReadReply(r, v.Op, wire.MaxReportReply, nil)
	return body, err
}

func loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Print writes an answer the way the operator reads it: the status report as the leader wrote
// it, the receipt of what an admission recorded, or what another change applied.
func Print(w io.Writer, v Verb, a Answer) error {
	switch {
	case v.Op == wire.OpClusterStatus:
		_, err := w.Write(a.Body)
		return err
	case v.Seat != "":
		return printReceipt(w, v, a)
	case v.Op == wire.OpEnrollControl:
		return printEnrollment(w, a)
	}
	f, err := wire.SplitFields(nil, a.Body, 1)
	if err != nil {
		return fmt.Errorf("the answer from %s: %w", a.From, err)
	}
	_, err = fmt.Fprintf(w, "%s: %s\n", a.From, f[0])
	return err
}

// printReceipt prints CLUSTER-ADMIT's receipt, `[id][endpoint][key text or empty]`.
func printReceipt(w io.Writer, v Verb, a Answer) error {
	f, err := wire.SplitFields(nil, a.Body, 3)
	if err != nil {
		return fmt.Errorf("the receipt from %s: %w", a.From, err)
	}
	key := string(f[2])
	if key == "" {
		key = "none stated (a key already recorded stays)"
	}
	_, err = fmt.Fprintf(w, "recorded by %s: member %s, consensus endpoint %s, key %s, seat %s\n",
		a.From, f[0], f[1], key, v.Seat)
	return err
}
