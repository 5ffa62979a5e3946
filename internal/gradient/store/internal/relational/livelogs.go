package relational

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// AppendBuildLogChunk implements store.Builds. Each chunk is one row keyed by its byte
// offset, so appending never rewrites earlier bytes; the offset is answered so the server
// can hand the chunk to live followers in the same numbering (gradient-server §16).
func (s *Store) AppendBuildLogChunk(ctx context.Context, assignmentID string, data []byte) (store.LogAppend, error) {
	if len(data) == 0 {
		return store.LogAppend{}, nil
	}
	var out store.LogAppend
	err := s.write(ctx, "append build log", func(tx Tx) error {
		a, err := openAssignment(ctx, tx, assignmentID, store.JobBuild)
		if err != nil {
			return err
		}
		att, err := ensureAttempt(ctx, tx, a, s.clock())
		if err != nil {
			return err
		}
		if att.Outcome != store.AttemptRunning {
			return store.ErrNoAttempt
		}
		if att.LogBytes+int64(len(data)) > s.policy.MaxLogBytes {
			return store.ErrLogLimit
		}
		if _, err := tx.Exec(ctx, `UPDATE build_attempt SET log_bytes = log_bytes + $2 WHERE id = $1`,
			att.ID, int64(len(data))); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO build_log_chunk (attempt_id, byte_offset, data) VALUES ($1, $2, $3)`,
			att.ID, att.LogBytes, data)
		out = store.LogAppend{BuildID: att.BuildID, AttemptID: att.ID, Offset: att.LogBytes}
		return err
	})
	if err != nil {
		return store.LogAppend{}, err
	}
	return out, nil
}
