package relational

import (
	"context"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// CreateRegistration implements store.Admin.
func (s *Store) CreateRegistration(ctx context.Context, r store.NewRegistration) (store.Registration, error) {
	if r.WorkerID == "" || r.TokenHash == "" || (len(r.TokenEnc) > 0) != (r.URL != "") {
		return store.Registration{}, fmt.Errorf("create registration: worker id, token hash, and token_enc with url together: %w", store.ErrInvalid)
	}
	out := store.Registration{ID: newID(), PeerID: r.PeerID, WorkerID: r.WorkerID, Active: true,
		EnableFetch: r.EnableFetch, EnableEval: r.EnableEval, EnableBuild: r.EnableBuild,
		DisplayName: r.DisplayName, URL: r.URL, HasDialToken: len(r.TokenEnc) > 0, CreatedAt: s.clock()}
	err := s.write(ctx, "create registration", func(tx Tx) error {
		kind, err := peerKind(ctx, tx, r.PeerID)
		if err != nil {
			return err
		}
		out.PeerKind = kind
		if err := workerIDFree(ctx, tx, "team_worker", r.WorkerID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO worker_registration (id, peer_id, peer_kind, worker_id, token_hash, token_enc, url,
			active, enable_fetch, enable_eval, enable_build, display_name, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, true, $8, $9, $10, $11, $12)`,
			out.ID, out.PeerID, int(kind), out.WorkerID, r.TokenHash, nilIfEmpty(r.TokenEnc), nilIfEmptyString(r.URL),
			out.EnableFetch, out.EnableEval, out.EnableBuild, out.DisplayName, out.CreatedAt)
		return s.conflict(err, "registration", r.PeerID+"/"+r.WorkerID)
	})
	return out, err
}

// peerKind finds what the peer ID names: a project or a cache.
func peerKind(ctx context.Context, tx Tx, peerID string) (session.PeerKind, error) {
	if !validID(peerID) {
		return 0, fmt.Errorf("peer %q: %w", peerID, store.ErrNotFound)
	}
	var kind int
	err := tx.QueryRow(ctx, `SELECT 0 FROM project WHERE id = $1 UNION ALL SELECT 1 FROM cache WHERE id = $1`, peerID).Scan(&kind)
	if err != nil {
		return 0, notFound(err, "peer", peerID)
	}
	if kind == 1 {
		return session.PeerCache, nil
	}
	return session.PeerProject, nil
}

// workerIDFree refuses a worker ID the other owner kind holds (gradient-protocol §4.2).
// Under serializable isolation the read conflicts with a concurrent insert of the same ID
// into the other table.
func workerIDFree(ctx context.Context, tx Tx, other, workerID string) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+other+` WHERE worker_id = $1`, workerID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("worker id %q: %w", workerID, store.ErrWorkerIDTaken)
	}
	return nil
}

// SetRegistrationActive implements store.Admin.
func (s *Store) SetRegistrationActive(ctx context.Context, peerID, workerID string, active bool) error {
	if !validID(peerID) {
		return fmt.Errorf("registration %s/%s: %w", peerID, workerID, store.ErrNotFound)
	}
	return s.write(ctx, "set registration active", func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE worker_registration SET active = $3 WHERE peer_id = $1 AND worker_id = $2`,
			peerID, workerID, active)
		if err == nil && n == 0 {
			err = fmt.Errorf("registration %s/%s: %w", peerID, workerID, store.ErrNotFound)
		}
		return err
	})
}

// CreateTeamWorker implements store.Admin.
func (s *Store) CreateTeamWorker(ctx context.Context, w store.NewTeamWorker) (store.TeamWorkerRow, error) {
	if w.WorkerID == "" || w.TokenHash == "" || (len(w.TokenEnc) > 0) != (w.URL != "") {
		return store.TeamWorkerRow{}, fmt.Errorf("create team worker: worker id, token hash, and token_enc with url together: %w", store.ErrInvalid)
	}
	out := store.TeamWorkerRow{ID: newID(), TeamID: w.TeamID, WorkerID: w.WorkerID, URL: w.URL,
		Enabled: w.Enabled, HasDialToken: len(w.TokenEnc) > 0, CreatedAt: s.clock()}
	err := s.write(ctx, "create team worker", func(tx Tx) error {
		if err := mustExist(ctx, tx, "team", w.TeamID); err != nil {
			return err
		}
		if err := workerIDFree(ctx, tx, "worker_registration", w.WorkerID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO team_worker (id, team_id, worker_id, token_hash, token_enc, url, enabled, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			out.ID, out.TeamID, out.WorkerID, w.TokenHash, nilIfEmpty(w.TokenEnc), nilIfEmptyString(w.URL), out.Enabled, out.CreatedAt)
		return s.conflict(err, "team worker", w.WorkerID)
	})
	return out, err
}

// SetTeamWorkerEnabled implements store.Admin.
func (s *Store) SetTeamWorkerEnabled(ctx context.Context, workerID string, enabled bool) error {
	return s.write(ctx, "set team worker enabled", func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE team_worker SET enabled = $2 WHERE worker_id = $1`, workerID, enabled)
		if err == nil && n == 0 {
			err = fmt.Errorf("team worker %q: %w", workerID, store.ErrNotFound)
		}
		return err
	})
}
