package relational

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// MarkWorkerConnected implements store.Workers.
func (s *Store) MarkWorkerConnected(ctx context.Context, workerID string, at time.Time) error {
	return s.write(ctx, "mark worker connected", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO worker (worker_id, last_connected_at, last_seen_at) VALUES ($1, $2, $2)
			ON CONFLICT (worker_id) DO UPDATE SET last_connected_at = excluded.last_connected_at,
				last_seen_at = excluded.last_seen_at, offline_reason = NULL`, workerID, ts(at))
		return err
	})
}

// MarkWorkerSeen implements store.Workers.
func (s *Store) MarkWorkerSeen(ctx context.Context, workerID string, at time.Time) error {
	return s.write(ctx, "mark worker seen", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO worker (worker_id, last_seen_at) VALUES ($1, $2)
			ON CONFLICT (worker_id) DO UPDATE SET last_seen_at = excluded.last_seen_at`, workerID, ts(at))
		return err
	})
}

// SetWorkerCapabilities implements store.Workers.
func (s *Store) SetWorkerCapabilities(ctx context.Context, workerID string, capabilitiesJSON []byte) error {
	if !json.Valid(capabilitiesJSON) {
		return fmt.Errorf("set worker capabilities: not JSON: %w", store.ErrInvalid)
	}
	return s.write(ctx, "set worker capabilities", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO worker (worker_id, capabilities) VALUES ($1, $2)
			ON CONFLICT (worker_id) DO UPDATE SET capabilities = excluded.capabilities`, workerID, string(capabilitiesJSON))
		return err
	})
}

// MarkWorkerOffline implements store.Workers.
func (s *Store) MarkWorkerOffline(ctx context.Context, workerID, reason string) error {
	return s.write(ctx, "mark worker offline", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO worker (worker_id, offline_reason) VALUES ($1, $2)
			ON CONFLICT (worker_id) DO UPDATE SET offline_reason = excluded.offline_reason`, workerID, reason)
		return err
	})
}

// ListWorkers implements store.Reads: every worker ID that is registered (registration or
// team worker) or has a worker row, with its stamps.
func (s *Store) ListWorkers(ctx context.Context) ([]store.WorkerInfo, error) {
	return readAll(ctx, s, "list workers", scanWorkerInfo, `WITH ids AS (
			SELECT worker_id FROM worker_registration UNION SELECT worker_id FROM team_worker
			UNION SELECT worker_id FROM worker)
		SELECT ids.worker_id,
			COALESCE((SELECT MAX(r.display_name) FROM worker_registration r WHERE r.worker_id = ids.worker_id), ''),
			EXISTS (SELECT 1 FROM worker_registration r WHERE r.worker_id = ids.worker_id)
				OR EXISTS (SELECT 1 FROM team_worker t WHERE t.worker_id = ids.worker_id),
			w.last_connected_at, w.last_seen_at, w.capabilities, COALESCE(w.offline_reason, '')
		FROM ids LEFT JOIN worker w ON w.worker_id = ids.worker_id ORDER BY ids.worker_id`)
}

func scanWorkerInfo(r Row) (store.WorkerInfo, error) {
	var w store.WorkerInfo
	var connected, seen Timestamp
	var caps *string
	if err := r.Scan(&w.WorkerID, &w.DisplayName, &w.Registered, &connected, &seen, &caps, &w.OfflineReason); err != nil {
		return w, err
	}
	w.LastConnectedAt, w.LastSeenAt = connected.Time, seen.Time
	if caps != nil {
		w.Capabilities = []byte(*caps)
	}
	return w, nil
}
