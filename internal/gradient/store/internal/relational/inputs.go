package relational

import (
	"context"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// inputsUnavailable handles gradient-server §6.4 InputsUnavailable: the cache rows of the
// missing paths are stale, so they are demoted, the builds that produced them run again, and
// the failing build waits for them (Created) or, when nothing produces them, is queued
// again. After Policy.InputsUnavailableLimit loops the build fails for good.
func (s *Store) inputsUnavailable(ctx context.Context, tx Tx, c *change, buildID string, missing []string) error {
	var loops int
	if err := tx.QueryRow(ctx, `UPDATE build SET inputs_loops = inputs_loops + 1 WHERE id = $1 RETURNING inputs_loops`,
		buildID).Scan(&loops); err != nil {
		return err
	}
	if loops >= s.policy.InputsUnavailableLimit {
		return failForGood(ctx, tx, c, buildID, store.BuildFailedPermanent)
	}
	if err := demotePaths(ctx, tx, c, missing); err != nil {
		return err
	}
	if err := rerunProducers(ctx, tx, c, missing); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE build SET status = 0, not_before = NULL, updated_at = $2 WHERE id = $1`,
		buildID, c.now); err != nil {
		return err
	}
	c.requeued(store.BuildJob(buildID))
	return promoteReady(ctx, tx, c, []string{buildID})
}

func demotePaths(ctx context.Context, tx Tx, c *change, paths []string) error {
	var hashes []string
	for _, p := range paths {
		if h, err := store.StoreHash(p); err == nil {
			hashes = append(hashes, h)
		}
	}
	gone, err := deleteCachedRows(ctx, tx, hashes)
	c.Demoted = append(c.Demoted, gone...)
	return err
}

// rerunProducers queues again the finished builds whose outputs are among paths.
func rerunProducers(ctx context.Context, tx Tx, c *change, paths []string) error {
	for _, part := range chunks(paths, inChunk) {
		args := append([]any{c.now}, stringArgs(part)...)
		ids, err := queryStrings(ctx, tx, `UPDATE build SET status = 1, queued_at = $1, updated_at = $1
			WHERE status IN (3, 7) AND derivation_id IN (
				SELECT derivation_id FROM derivation_output WHERE path IN (`+placeholders(2, len(part))+`))
			RETURNING id`, args...)
		if err != nil {
			return err
		}
		for _, id := range ids {
			c.requeued(store.BuildJob(id))
			c.build(id, store.BuildQueued, time.Time{})
		}
	}
	return nil
}
