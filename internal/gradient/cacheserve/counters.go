package cacheserve

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/counter"
)

// Counters count every cache answer and refusal. Share one value across the server's
// sessions and export it with Metrics; each field's metric name and label are in its
// comment and in Metrics. Fields are monotonic.
type Counters struct {
	Queries             atomic.Uint64 // gradient_cache_queries_total
	QueryErrTooMany     atomic.Uint64 // gradient_cache_query_errors_total{reason="too_many_paths"}
	QueryErrInvalid     atomic.Uint64 // gradient_cache_query_errors_total{reason="invalid"}
	QueryErrStore       atomic.Uint64 // gradient_cache_query_errors_total{reason="store"}
	QueryErrTimeout     atomic.Uint64 // gradient_cache_query_errors_total{reason="timeout"}
	QueryErrTooLarge    atomic.Uint64 // gradient_cache_query_errors_total{reason="too_large"}
	Forbidden           atomic.Uint64 // gradient_cache_forbidden_total
	UploadRequests      atomic.Uint64 // gradient_cache_upload_requests_total
	UploadsGranted      atomic.Uint64 // gradient_cache_uploads_granted_total
	UploadsResumed      atomic.Uint64 // gradient_cache_uploads_resumed_total
	SkippedStored       atomic.Uint64 // gradient_cache_uploads_skipped_total{reason="stored"}
	SkippedInProgress   atomic.Uint64 // gradient_cache_uploads_skipped_total{reason="in_progress"}
	SkippedEvalCache    atomic.Uint64 // gradient_cache_uploads_skipped_total{reason="eval_cache"}
	RetryAdmission      atomic.Uint64 // gradient_cache_uploads_retry_total{reason="admission"}
	RetryBusy           atomic.Uint64 // gradient_cache_uploads_retry_total{reason="busy"}
	RetryTooManyOpen    atomic.Uint64 // gradient_cache_uploads_retry_total{reason="too_many_open"}
	RetryStorage        atomic.Uint64 // gradient_cache_uploads_retry_total{reason="storage"}
	RetryLeaseExpired   atomic.Uint64 // gradient_cache_uploads_retry_total{reason="lease_expired"}
	RetryOffset         atomic.Uint64 // gradient_cache_uploads_retry_total{reason="offset"}
	RetryResumeMismatch atomic.Uint64 // gradient_cache_uploads_retry_total{reason="resume_mismatch"}
	RetryRecord         atomic.Uint64 // gradient_cache_uploads_retry_total{reason="record"}
	RetryUnknown        atomic.Uint64 // gradient_cache_uploads_retry_total{reason="unknown_request"}
	RejectedInvalid     atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="invalid"}
	RejectedTooLarge    atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="too_large"}
	RejectedNoCache     atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="no_cache"}
	RejectedFileSize    atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="file_size"}
	RejectedFileHash    atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="file_hash"}
	RejectedDecompress  atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="decompress"}
	RejectedNarSize     atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="nar_size"}
	RejectedNarFormat   atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="nar_format"}
	RejectedNarHash     atomic.Uint64 // gradient_cache_uploads_rejected_total{reason="nar_hash"}
	Committed           atomic.Uint64 // gradient_cache_uploads_committed_total
	CommittedBytes      atomic.Uint64 // gradient_cache_committed_bytes_total (compressed)
	Canceled            atomic.Uint64 // gradient_cache_uploads_canceled_total
	UploadBytes         atomic.Uint64 // gradient_cache_upload_bytes_total (chunk bytes staged)
	ChunksDropped       atomic.Uint64 // gradient_cache_upload_chunks_dropped_total
	LeasesExpired       atomic.Uint64 // gradient_cache_upload_leases_expired_total
	NarServes           atomic.Uint64 // gradient_cache_nar_serves_total (streams completed)
	NarServedBytes      atomic.Uint64 // gradient_cache_nar_served_bytes_total
	UnavailNotInCache   atomic.Uint64 // gradient_cache_nar_unavailable_total{reason="not_in_cache"}
	UnavailMissing      atomic.Uint64 // gradient_cache_nar_unavailable_total{reason="missing"}
	UnavailDamaged      atomic.Uint64 // gradient_cache_nar_unavailable_total{reason="damaged"}
	UnavailInvalid      atomic.Uint64 // gradient_cache_nar_unavailable_total{reason="invalid"}
	AbortStore          atomic.Uint64 // gradient_cache_nar_aborts_total{reason="store"}
	AbortRead           atomic.Uint64 // gradient_cache_nar_aborts_total{reason="read"}
	AbortStalled        atomic.Uint64 // gradient_cache_nar_aborts_total{reason="stalled"}
	AbortOverload       atomic.Uint64 // gradient_cache_nar_aborts_total{reason="overload"}
	AbortCorrupt        atomic.Uint64 // gradient_cache_nar_aborts_total{reason="corrupt"}
	Demoted             atomic.Uint64 // gradient_cache_paths_demoted_total
	UpstreamHits        atomic.Uint64 // gradient_cache_upstream_answers_total{reason="found"}
	UpstreamMisses      atomic.Uint64 // gradient_cache_upstream_answers_total{reason="missing"}
}

// Metrics lists every counter under its metric name, a family by reason as one Metric, each
// with its own help text.
func (c *Counters) Metrics() []counter.Metric {
	var out []counter.Metric
	index := map[string]int{}
	for _, n := range counterNames {
		if n.label == "" {
			out = append(out, counter.Metric{Name: n.name, Help: familyHelp[n.name], Value: n.field(c)})
			continue
		}
		i, ok := index[n.name]
		if !ok {
			i = len(out)
			index[n.name] = i
			out = append(out, counter.Metric{Name: n.name, Help: familyHelp[n.name], Label: "reason", Series: map[string]*atomic.Uint64{}})
		}
		out[i].Series[n.label] = n.field(c)
	}
	return out
}

// familyHelp is each metric's help line.
var familyHelp = map[string]string{
	"gradient_cache_queries_total":               "CacheQuery messages answered.",
	queryErrors:                                  "CacheQuery messages answered with an error, by reason.",
	"gradient_cache_forbidden_total":             "Messages that would write to a cache, refused on a read-only session (Reject 403).",
	"gradient_cache_upload_requests_total":       "UploadRequest messages received.",
	"gradient_cache_uploads_granted_total":       "Uploads granted a lease, resumed ones included.",
	"gradient_cache_uploads_resumed_total":       "Uploads granted a lease that resume a staged partial.",
	skipped:                                      "Upload requests answered that no upload is needed, by reason.",
	retried:                                      "Uploads answered retry later, by reason.",
	rejected:                                     "Uploads rejected for good, by reason: the request or the bytes were wrong.",
	"gradient_cache_uploads_committed_total":     "Uploads verified and installed into the cache.",
	"gradient_cache_committed_bytes_total":       "Compressed bytes of the uploads verified and installed.",
	"gradient_cache_uploads_canceled_total":      "Uploads the worker canceled; the partial stays for a resume.",
	"gradient_cache_upload_bytes_total":          "Upload chunk bytes staged.",
	"gradient_cache_upload_chunks_dropped_total": "Upload chunks dropped: their upload was canceled, failed, expired or never granted.",
	"gradient_cache_upload_leases_expired_total": "Upload leases that expired; the upload lost its slot and its partial stays for a resume.",
	"gradient_cache_nar_serves_total":            "NAR streams served to the end.",
	"gradient_cache_nar_served_bytes_total":      "NAR bytes served.",
	unavailable:                                  "NAR pulls answered unavailable, by reason.",
	aborted:                                      "NAR streams aborted part-way, by reason.",
	"gradient_cache_paths_demoted_total":         "Cache rows demoted because their NAR object was missing.",
	upstreamAnswers:                              "External CacheQuery paths looked up in the caches' upstreams, by outcome.",
}

type counterName struct {
	name, label string
	field       func(*Counters) *atomic.Uint64
}

const (
	queryErrors = "gradient_cache_query_errors_total"
	skipped     = "gradient_cache_uploads_skipped_total"
	retried     = "gradient_cache_uploads_retry_total"
	rejected    = "gradient_cache_uploads_rejected_total"
	unavailable = "gradient_cache_nar_unavailable_total"
	aborted     = "gradient_cache_nar_aborts_total"
	// upstreamAnswers counts gradient-server §14 lookups.
	upstreamAnswers = "gradient_cache_upstream_answers_total"
)

var counterNames = []counterName{
	{"gradient_cache_queries_total", "", func(c *Counters) *atomic.Uint64 { return &c.Queries }},
	{queryErrors, "too_many_paths", func(c *Counters) *atomic.Uint64 { return &c.QueryErrTooMany }},
	{queryErrors, "invalid", func(c *Counters) *atomic.Uint64 { return &c.QueryErrInvalid }},
	{queryErrors, "store", func(c *Counters) *atomic.Uint64 { return &c.QueryErrStore }},
	{queryErrors, "timeout", func(c *Counters) *atomic.Uint64 { return &c.QueryErrTimeout }},
	{queryErrors, "too_large", func(c *Counters) *atomic.Uint64 { return &c.QueryErrTooLarge }},
	{"gradient_cache_forbidden_total", "", func(c *Counters) *atomic.Uint64 { return &c.Forbidden }},
	{"gradient_cache_upload_requests_total", "", func(c *Counters) *atomic.Uint64 { return &c.UploadRequests }},
	{"gradient_cache_uploads_granted_total", "", func(c *Counters) *atomic.Uint64 { return &c.UploadsGranted }},
	{"gradient_cache_uploads_resumed_total", "", func(c *Counters) *atomic.Uint64 { return &c.UploadsResumed }},
	{skipped, "stored", func(c *Counters) *atomic.Uint64 { return &c.SkippedStored }},
	{skipped, "in_progress", func(c *Counters) *atomic.Uint64 { return &c.SkippedInProgress }},
	{skipped, "eval_cache", func(c *Counters) *atomic.Uint64 { return &c.SkippedEvalCache }},
	{retried, "admission", func(c *Counters) *atomic.Uint64 { return &c.RetryAdmission }},
	{retried, "busy", func(c *Counters) *atomic.Uint64 { return &c.RetryBusy }},
	{retried, "too_many_open", func(c *Counters) *atomic.Uint64 { return &c.RetryTooManyOpen }},
	{retried, "storage", func(c *Counters) *atomic.Uint64 { return &c.RetryStorage }},
	{retried, "lease_expired", func(c *Counters) *atomic.Uint64 { return &c.RetryLeaseExpired }},
	{retried, "offset", func(c *Counters) *atomic.Uint64 { return &c.RetryOffset }},
	{retried, "resume_mismatch", func(c *Counters) *atomic.Uint64 { return &c.RetryResumeMismatch }},
	{retried, "record", func(c *Counters) *atomic.Uint64 { return &c.RetryRecord }},
	{retried, "unknown_request", func(c *Counters) *atomic.Uint64 { return &c.RetryUnknown }},
	{rejected, "invalid", func(c *Counters) *atomic.Uint64 { return &c.RejectedInvalid }},
	{rejected, "too_large", func(c *Counters) *atomic.Uint64 { return &c.RejectedTooLarge }},
	{rejected, "no_cache", func(c *Counters) *atomic.Uint64 { return &c.RejectedNoCache }},
	{rejected, "file_size", func(c *Counters) *atomic.Uint64 { return &c.RejectedFileSize }},
	{rejected, "file_hash", func(c *Counters) *atomic.Uint64 { return &c.RejectedFileHash }},
	{rejected, "decompress", func(c *Counters) *atomic.Uint64 { return &c.RejectedDecompress }},
	{rejected, "nar_size", func(c *Counters) *atomic.Uint64 { return &c.RejectedNarSize }},
	{rejected, "nar_format", func(c *Counters) *atomic.Uint64 { return &c.RejectedNarFormat }},
	{rejected, "nar_hash", func(c *Counters) *atomic.Uint64 { return &c.RejectedNarHash }},
	{"gradient_cache_uploads_committed_total", "", func(c *Counters) *atomic.Uint64 { return &c.Committed }},
	{"gradient_cache_committed_bytes_total", "", func(c *Counters) *atomic.Uint64 { return &c.CommittedBytes }},
	{"gradient_cache_uploads_canceled_total", "", func(c *Counters) *atomic.Uint64 { return &c.Canceled }},
	{"gradient_cache_upload_bytes_total", "", func(c *Counters) *atomic.Uint64 { return &c.UploadBytes }},
	{"gradient_cache_upload_chunks_dropped_total", "", func(c *Counters) *atomic.Uint64 { return &c.ChunksDropped }},
	{"gradient_cache_upload_leases_expired_total", "", func(c *Counters) *atomic.Uint64 { return &c.LeasesExpired }},
	{"gradient_cache_nar_serves_total", "", func(c *Counters) *atomic.Uint64 { return &c.NarServes }},
	{"gradient_cache_nar_served_bytes_total", "", func(c *Counters) *atomic.Uint64 { return &c.NarServedBytes }},
	{unavailable, "not_in_cache", func(c *Counters) *atomic.Uint64 { return &c.UnavailNotInCache }},
	{unavailable, "missing", func(c *Counters) *atomic.Uint64 { return &c.UnavailMissing }},
	{unavailable, "damaged", func(c *Counters) *atomic.Uint64 { return &c.UnavailDamaged }},
	{unavailable, "invalid", func(c *Counters) *atomic.Uint64 { return &c.UnavailInvalid }},
	{aborted, "store", func(c *Counters) *atomic.Uint64 { return &c.AbortStore }},
	{aborted, "read", func(c *Counters) *atomic.Uint64 { return &c.AbortRead }},
	{aborted, "stalled", func(c *Counters) *atomic.Uint64 { return &c.AbortStalled }},
	{aborted, "overload", func(c *Counters) *atomic.Uint64 { return &c.AbortOverload }},
	{aborted, "corrupt", func(c *Counters) *atomic.Uint64 { return &c.AbortCorrupt }},
	{"gradient_cache_paths_demoted_total", "", func(c *Counters) *atomic.Uint64 { return &c.Demoted }},
	{upstreamAnswers, "found", func(c *Counters) *atomic.Uint64 { return &c.UpstreamHits }},
	{upstreamAnswers, "missing", func(c *Counters) *atomic.Uint64 { return &c.UpstreamMisses }},
}
