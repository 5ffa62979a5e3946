package tier

import (
	"context"
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/cacheverbs"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// fetch: a local hit answers (rule 1); a local miss reads through and fills (rule 2).
func (t *Tier) fetch(ctx context.Context, key []byte) frameserver.Reply {
	v, hit, err := cacheverbs.Fetch(t.st, key)
	switch {
	case err != nil:
		return t.refuse(err)
	case hit:
		t.c.hits.Add(1)
		return frameserver.Ok(v)
	}
	if v, hit = t.readThrough(ctx, key); !hit {
		t.c.misses.Add(1)
		return frameserver.Miss()
	}
	t.c.upstreamHits.Add(1)
	return frameserver.Ok(v)
}

// readThrough asks the upstream and keeps what it answers. Every failure is a miss: a build
// must not fail because a cache was down (rule 4).
func (t *Tier) readThrough(ctx context.Context, key []byte) ([]byte, bool) {
	if t.up == nil {
		return nil, false
	}
	v, hit, err := t.up.Fetch(ctx, key)
	if err != nil {
		t.upstreamFailed("FETCH", err)
		return nil, false
	}
	if !hit {
		return nil, false
	}
	// The upstream is trusted to have checked the value at STORE, but a value we cannot
	// decode must neither be served nor take room in the local tier.
	if _, err := value.Decode(v); err != nil {
		t.log.Warn("cache tier: upstream answered a value that is not a current compile-value; treating it as a miss", "err", err)
		return nil, false
	}
	if err := t.st.Put(key, v); err != nil {
		t.c.fillFailures.Add(1)
		t.log.Warn("cache tier: keeping an upstream hit locally failed; serving it anyway", "err", err)
	}
	return v, true
}

// store writes locally first, answering its outcome, then offers upstream (rule 3). The offer
// is made even when the local write failed: the upstream may still keep it for other machines.
func (t *Tier) store(req *frameserver.Request) frameserver.Reply {
	r, err := cacheverbs.ParseStore(req.Keep()) // the value stays referenced by the store and the queue
	if err != nil {
		return t.refuse(err)
	}
	reply := frameserver.Ok(nil)
	if err := cacheverbs.Put(t.st, r); err != nil {
		t.c.storeFailures.Add(1)
		reply = t.refuse(err)
	}
	if t.offers != nil && !t.offers.enqueue(offer{key: r.Key, group: r.PrefetchGroup, value: r.Value}) {
		t.offered(errOfferDropped)
	}
	return reply
}

// drop removes from the local tier only; it is never forwarded (pace-wire §1.13).
func (t *Tier) drop(key []byte) frameserver.Reply {
	present, err := cacheverbs.Drop(t.st, key)
	switch {
	case err != nil:
		return t.refuse(err)
	case !present:
		return frameserver.Miss()
	}
	return frameserver.Ok(nil)
}

// refuse answers a cache verb's failure with the code pace-kv would use, counting the refused
// request under the tier's series.
func (t *Tier) refuse(err error) frameserver.Reply {
	switch cacheverbs.Classify(err) {
	case cacheverbs.FailureMalformedFrame, cacheverbs.FailureNotAValue:
		t.c.refusedMalformed.Add(1)
	case cacheverbs.FailureForeignGeneration:
		t.c.refusedForeign.Add(1)
	case cacheverbs.FailureStorageWrite:
		t.log.Warn("cache tier: storage write failed", "err", err)
	}
	return frameserver.Refuse(cacheverbs.Refusal(err))
}

// offered counts the outcome of one upstream offer; it never reaches the client.
func (t *Tier) offered(err error) {
	if err == nil {
		t.c.upstreamStores.Add(1)
		return
	}
	t.c.upstreamStoreFails.Add(1)
	t.upstreamFailed("STORE", err)
}

// upstreamFailed logs a failed upstream exchange: unreachability is the down window's to
// report, a refusal is reported here.
func (t *Tier) upstreamFailed(verb string, err error) {
	if isDown(err) || errors.Is(err, errOfferDropped) {
		t.log.Debug("cache tier: upstream exchange failed", "verb", verb, "err", err)
		return
	}
	t.refusals.report(verb, err)
}
