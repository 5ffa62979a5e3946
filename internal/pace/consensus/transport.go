package consensus

import pb "go.etcd.io/raft/v3/raftpb"

// Transport carries Raft messages to other members. The loop calls Send
// after the Ready that produced the messages is on disk; Send must not
// block for long (queue and return) and may drop messages, which Raft
// retries. Messages arriving from peers go to Node.Step; a transport that
// delivers a snapshot (MsgSnap) reports the outcome with
// Node.ReportSnapshot, and a peer it cannot reach with
// Node.ReportUnreachable.
//
// The transport resolves a message's To (a Raft node id) to a member with
// State().MemberByRaftID, and is where peers prove their keys
// (pace-consensus §7.3); this package trusts whatever reaches Step.
type Transport interface {
	Send(msgs []*pb.Message)
}

// NoTransport drops every message: a cluster of one has nobody to send to.
type NoTransport struct{}

// Send drops msgs.
func (NoTransport) Send([]*pb.Message) {}
