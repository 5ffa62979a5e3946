// Package clusterctl is the client side of the operator's cluster verbs (pace-node §3.2):
// `pace-node --scheduler HOST:PORT` with --cluster-status, --cluster-admit,
// --cluster-admit-learner, --cluster-forget or --cluster-set. A verb goes to the first
// scheduler endpoint that connects, follows not-leader to the leader (two hops at most), and is
// never sent to another endpoint once one answered, since it may have been applied there.
// Cluster changes need an identified caller: a verb sent to another machine presents a
// machine ticket minted by this machine's own node (machineticket).
package clusterctl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Verb is one operator verb, ready to send.
type Verb struct {
	Op     wire.Op
	Fields [][]byte
	// Seat names the seat an admission asks for ("voter" or "learner"); empty otherwise.
	Seat string
}

// Status is --cluster-status.
func Status() Verb { return Verb{Op: wire.OpClusterStatus} }

// Forget is --cluster-forget=<id>: remove the member and revoke its key in one entry.
func Forget(id string) (Verb, error) {
	if id == "" {
		return Verb{}, errors.New("--cluster-forget needs a member id")
	}
	return Verb{Op: wire.OpClusterForget, Fields: [][]byte{[]byte(id)}}, nil
}

// Set is --cluster-set=<name>=<value>. upstream is refused here by name: where a machine's
// tier reads through to is its own secret destination, never replicated.
func Set(operand string) (Verb, error) {
	name, value, ok := strings.Cut(operand, "=")
	switch {
	case !ok || name == "":
		return Verb{}, fmt.Errorf("--cluster-set=%q: want <name>=<value>", operand)
	case name == "upstream":
		return Verb{}, errors.New("--cluster-set=upstream: the upstream cache is each machine's own --upstream (and its password), never a replicated setting")
	}
	return Verb{Op: wire.OpClusterSet, Fields: [][]byte{[]byte(name), []byte(value)}}, nil
}

// Admit is --cluster-admit (learner false) or --cluster-admit-learner:
// `<id>=<host>:<port>[@<key>]`, the key in its 43-character text.
func Admit(operand string, learner bool) (Verb, error) {
	flagName, op, seat := "--cluster-admit", wire.OpClusterAdmit, "voter"
	if learner {
		flagName, op, seat = "--cluster-admit-learner", wire.OpClusterAdmitLearner, "learner"
	}
	id, rest, ok := strings.Cut(operand, "=")
	if !ok || id == "" || rest == "" {
		return Verb{}, fmt.Errorf("%s=%q: want <id>=<host>:<port>[@<key>]", flagName, operand)
	}
	endpoint, key, _ := strings.Cut(rest, "@")
	if err := checkEndpoint(endpoint); err != nil {
		return Verb{}, fmt.Errorf("%s=%q: %w", flagName, operand, err)
	}
	if key != "" {
		if _, err := edkey.Parse(key); err != nil {
			return Verb{}, fmt.Errorf("%s=%q: the key: %w", flagName, operand, err)
		}
	}
	return Verb{Op: op, Seat: seat, Fields: [][]byte{[]byte(id), []byte(endpoint), []byte(key)}}, nil
}

func checkEndpoint(endpoint string) error {
	i := strings.LastIndexByte(endpoint, ':')
	if i <= 0 || i == len(endpoint)-1 {
		return fmt.Errorf("%q is not host:port", endpoint)
	}
	return nil
}

// payload is the request payload of the verb's fields.
func (v Verb) payload() []byte {
	var p []byte
	for _, f := range v.Fields {
		p = wire.AppendField(p, f)
	}
	return p
}
