package wire

// Construction labels for Ed25519 signatures over labelled messages
// (pace-wire §1.15, pace-wire §5.2): the first field of every signed field list
// names what is being signed, so a signature made for one construction can
// never verify as another. All distinct; a retired label is never reused.
const (
	LabelLease           = "pace-lease-v1"
	LabelTicket          = "pace-ticket-v1"
	LabelNodeChallenge   = "pace-node-challenge-v1"
	LabelNodeProof       = "pace-node-proof-v1"
	LabelEnrollRequest   = "pace-enroll-request-v1"
	LabelEnrollAdmission = "pace-enroll-admission-v1"
	LabelFleetSummary    = "pace-fleet-summary-v1"
	LabelDiscoveryProof  = "pace-discovery-proof-v1"
	LabelRaftProof       = "pace-raft-proof-v1"
	LabelRaftVerdict     = "pace-raft-verdict-v1"
	LabelCompileReply    = "pace-compile-reply-v1"
)

// Labels lists every construction label.
func Labels() []string {
	return []string{LabelLease, LabelTicket, LabelNodeChallenge, LabelNodeProof,
		LabelEnrollRequest, LabelEnrollAdmission, LabelFleetSummary, LabelDiscoveryProof,
		LabelRaftProof, LabelRaftVerdict, LabelCompileReply}
}

// AppendLabelledMessage appends the bytes a signature covers: a field list
// whose first field is the label, then the construction's fields.
func AppendLabelledMessage(dst []byte, label string, fields ...[]byte) []byte {
	dst = AppendStringField(dst, label)
	for _, f := range fields {
		dst = AppendField(dst, f)
	}
	return dst
}
