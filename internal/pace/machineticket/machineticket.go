// Package machineticket is the client side of machine tickets (pace-node §8.2): a process on a
// machine that is a fleet member asks its own node to mint a ticket for the one endpoint it is
// about to dial (MINT-TICKET, answered over loopback only), and presents it in an AUTH frame
// (credential kind 02) pipelined ahead of its command. A ticket admits this machine at that
// endpoint once, for a minute, so a client mints one per connection to another machine.
//
// pace-cc and the operator's cluster verbs use it; it stays small (the wire codec and the verb
// grammar only), so pace-cc's dependency list does not grow.
package machineticket

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// authKindTicket is AUTH's credential kind for a machine ticket (pace-wire §1.13).
const authKindTicket = 2

// ErrNoLocalNode: nothing answered MINT-TICKET at the local node address.
var ErrNoLocalNode = errors.New("machineticket: no node on this machine to mint a ticket")

// Mint asks the node at localNode (this machine's own, e.g. 127.0.0.1:6674) for a ticket that
// admits this machine at audience, the exact host:port about to be dialled.
func Mint(ctx context.Context, localNode, audience string, timeout time.Duration) ([]byte, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", localNode)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrNoLocalNode, localNode, err)
	}
	defer nc.Close()
	if timeout > 0 {
		nc.SetDeadline(time.Now().Add(timeout))
	}
	if _, err := nc.Write(Request(wire.OpMintTicket, verbs.MintTicketRequest{Audience: audience}.Append(nil))); err != nil {
		return nil, fmt.Errorf("machineticket: asking %s: %w", localNode, err)
	}
	_, payload, err := wire.ReadReply(bufio.NewReader(nc), wire.OpMintTicket, wire.MaxRefusalReply, nil)
	if err != nil {
		return nil, fmt.Errorf("machineticket: the node at %s minted nothing: %w", localNode, err)
	}
	ok, err := verbs.ParseMintTicketOk(payload)
	if err != nil {
		return nil, fmt.Errorf("machineticket: %w", err)
	}
	return ok.Ticket, nil
}

// Auth is the AUTH frame that presents ticket: `[u8 02][empty username][ticket]`.
func Auth(ticket []byte) []byte {
	payload := wire.AppendU8Field(nil, authKindTicket)
	payload = wire.AppendEmptyField(payload)
	return Request(wire.OpAuth, wire.AppendField(payload, ticket))
}

// ReadAuthReply reads the reply to an Auth frame: nil when the ticket was accepted, or when
// the server has no AUTH at all (unknown-opcode: continue with the pipelined command); the
// refusal otherwise (ticket-refused names why).
func ReadAuthReply(r *bufio.Reader) error {
	_, _, err := wire.ReadReply(r, wire.OpAuth, wire.MaxRefusalReply, nil)
	var ref wire.Refusal
	if errors.As(err, &ref) && ref.Code == wire.CodeUnknownOpcode {
		return nil
	}
	return err
}

// Request is one whole request frame: header, then the payload of already-appended fields.
func Request(op wire.Op, payload []byte) []byte {
	out := wire.AppendRequestHeader(make([]byte, 0, wire.RequestHeaderLen+len(payload)),
		wire.NewRequestHeader(op, uint32(len(payload))))
	return append(out, payload...)
}
