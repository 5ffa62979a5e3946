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
	// used: conn already carried a verb, so the scheduler may have closed it as idle since (the
	// node port closes a connection idle for 5 s; a registrar beats every 20 s).
	used bool
}

// dial opens the proven, sealed connection to the scheduler at addr.
func (l *schedLink) dial(ctx context.Context, addr string) error {
	conn, err := sealedconn.Dial(ctx, addr, sealedconn.Config{Prover: &nodeproof.Client{
		ID: l.n.id.NodeID, Key: l.n.id.Key, Roster: liveRoster{l.n.cons}, Random: rand.Reader,
	}, Counters: &l.n.proofCounters})
	if err != nil {
		return err
	}
	l.conn, l.used = conn, false
	return nil
}

// server is the node id of the scheduler the connection proved, "" without one.
func (l *schedLink) server() string {
	if l.conn == nil {
		return ""
	}
	return l.conn.Server().ID
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
		if body, err = l.send(ctx, op, fields); err == nil {
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

// send sends one verb. On a connection that already carried one, a failure that is no reply
// (the scheduler closed it as idle) is tried once more on a new connection to the same
// scheduler, rather than costing a heartbeat.
func (l *schedLink) send(ctx context.Context, op wire.Op, fields [][]byte) ([]byte, error) {
	_, body, err := l.conn.Do(ctx, op, fields...)
	var ref wire.Refusal
	if err != nil && l.used && !errors.As(err, &ref) && ctx.Err() == nil {
		addr := l.conn.RemoteAddr().String()
		l.drop()
		if derr := l.dial(ctx, addr); derr != nil {
			return nil, errors.Join(err, derr)
		}
		_, body, err = l.conn.Do(ctx, op, fields...)
	}
	l.used = err == nil
	return body, err
}

// splitPayload turns an Append-built payload back into fields for Do.
func splitPayload(op wire.Op, payload []byte) ([][]byte, error) {
	info, _ := wire.Lookup(op)
	return wire.SplitFields(nil, payload, info.Arity)
}
