// Package statussender drains the status outbox (gradient-server §12.4): a goroutine of its
// own reads due rows from the store, opens the project's sealed forge token or webhook
// secret, has internal/gradient/forgestatus build the request, sends it with a per-request
// timeout, and records the result — delivered, retried later with exponential backoff and
// jitter, or given up after a bounded number of attempts. The job loop never waits for it:
// statuses are queued in the store's own transactions and this package only reads them.
package statussender
