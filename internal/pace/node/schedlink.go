package node

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof/sealedconn"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// maxLeaderHops is how many not-leader answers one verb follows (pace-node §6.4).
const maxLeaderHops = 2

// schedLink is a connection from this node to a scheduler, proving this node's identity key
// and sealing every frame after (pace-node §8.3): the registrar's and the announcer's. A node
// that leads its own cluster reaches itself over loopback the same way.
type schedLink struct {
	n    *Node
	conn *sealedconn.Conn
}

// dial opens the proven, sealed connection to the scheduler at addr.
func (l *schedLink) dial(ctx context.Context, addr string) error {
	conn, err := sealedconn.Dial(ctx, addr, sealedconn.Config{Prover: &nodeproof.Client{
		ID: l.n.id.NodeID, Key: l.n.id.Key, Roster: liveRoster{l.n.cons}, Random: rand.Reader,
	}, Counters: &l.n.proofCounters})
	if err != nil {
		return err
	}
	l.conn = conn
	return nil
}

// drop closes the connection, if any.
func (l *schedLink) drop() {
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
}

// do sends one scheduler verb, following not-leader to the scheduler it names (two hops at
// most: this node's view of who leads may lag). Before it follows one it calls hopped, if set,
// whose error ends the verb there. Any failure drops the connection, so the next verb starts
// over (a new leader, a restarted scheduler).
func (l *schedLink) do(ctx context.Context, op wire.Op, payload []byte, hopped func() error) ([]byte, error) {
	fields, err := splitPayload(op, payload)
	for hop := 0; err == nil; hop++ {
		var body []byte
		if _, body, err = l.conn.Do(ctx, op, fields...); err == nil {
			return body, nil
		}
		var ref wire.Refusal
		if !errors.As(err, &ref) || ref.Code != wire.CodeNotLeader || ref.Message == "" || hop == maxLeaderHops {
			break
		}
		l.drop()
		if hopped != nil {
			if err = hopped(); err != nil {
				break
			}
		}
		err = l.dial(ctx, ref.Message)
	}
	l.drop()
	return nil, err
}

// splitPayload turns an Append-built payload back into fields for Do.
func splitPayload(op wire.Op, payload []byte) ([][]byte, error) {
	info, _ := wire.Lookup(op)
	return wire.SplitFields(nil, payload, info.Arity)
}
