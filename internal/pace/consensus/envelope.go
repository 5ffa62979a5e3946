package consensus

import (
	"encoding/binary"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// An entry's data (or a conf change's context) is an envelope: a version
// byte, the proposal id the proposer waits on (0 for the loop's own
// proposals and for Found), then the fleet command.
const (
	envelopeVersion   = 1
	envelopeHeaderLen = 1 + 8
)

func encodeEnvelope(proposalID uint64, cmd fleet.Command) []byte {
	b := make([]byte, 0, 128)
	b = append(b, envelopeVersion)
	b = binary.BigEndian.AppendUint64(b, proposalID)
	return fleet.EncodeCommand(b, cmd)
}

// decodeEnvelope returns the proposal id even when the command does not
// decode, so the proposer still hears the outcome.
func decodeEnvelope(b []byte) (uint64, fleet.Command, error) {
	if len(b) < envelopeHeaderLen || b[0] != envelopeVersion {
		return 0, nil, fmt.Errorf("%w: entry envelope of %d bytes, version %v", fleet.ErrMalformed, len(b), b[:min(1, len(b))])
	}
	id := binary.BigEndian.Uint64(b[1:])
	cmd, err := fleet.DecodeCommand(b[envelopeHeaderLen:])
	return id, cmd, err
}
