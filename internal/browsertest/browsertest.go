// Package browsertest drives headless Chromium for the end-to-end tests of the pages both
// systems serve (pace's fleet dashboard, gradient's web UI): finding the browser, starting it,
// loading a page with its HTTP status, running an action under a deadline, screenshots. It
// belongs to neither system, so both may import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Find returns Chromium's path. Missing, the test skips saying how to install it, unless the
// variable requireEnv is 1 (make test sets it), where it fails: CI installs Chromium with
// scripts/deps.sh test and must never skip a browser test.
func Find(t *testing.T, requireEnv string) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "Chromium is not installed: run scripts/deps.sh test (or apt-get install chromium)"
	if os.Getenv(requireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Start starts headless Chromium at path with a window of width × height; it is closed when
// the test ends.
func Start(t *testing.T, path string, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(width, height), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// Run runs one browser action under a deadline of its own and fails the test on an error.
func Run[T any](t *testing.T, ctx context.Context, deadline time.Duration, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// Navigate loads url and returns the HTTP status of the document it ends on. A 401 carrying a
// Basic challenge fails the load in headless Chromium (no one to ask for credentials), so the
// status is read from the response itself.
func Navigate(t *testing.T, ctx context.Context, url string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	responses := chromedp.Events(ctx, network.ResponseReceived)
	err := chromedp.Do(ctx, chromedp.Navigate(url))
	status := int64(0)
	for ev, evErr := range responses {
		if evErr != nil {
			t.Fatalf("browser: %v (navigation: %v)", evErr, err)
		}
		if ev.Type == network.ResourceTypeDocument {
			status = ev.Response.Status
			if status < 300 || status >= 400 {
				break
			}
		}
	}
	return status
}

// Screenshot writes a full-page PNG of what the browser shows to path.
func Screenshot(t *testing.T, ctx context.Context, deadline time.Duration, path string) {
	t.Helper()
	if err := os.WriteFile(path, Run(t, ctx, deadline, chromedp.FullScreenshot(100)), 0o644); err != nil {
		t.Fatal(err)
	}
}
