package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

func TestGCPassesDryRunAndAnswersTheReport(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.FileName))
	must(t, err)
	t.Cleanup(func() { s.Close() })
	key, hash, _ := peertoken.MintAPIKey(rand.Reader)
	_, err = s.BootstrapAPIKey(t.Context(), store.NewAPIKey{Owner: "admin", KeyHash: hash})
	must(t, err)
	var calls []bool
	gc := func(_ context.Context, dryRun bool) (GCReport, error) {
		calls = append(calls, dryRun)
		return GCReport{DryRun: dryRun, KeptPaths: 2, Deleted: []GCDeleted{{StorePath: "/nix/store/x", Size: 7, Reason: "r"}}}, nil
	}
	srv := httptest.NewServer(New(Config{Store: s, GC: gc}))
	t.Cleanup(srv.Close)
	for _, body := range []string{`{"dry_run":true}`, ``} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+Prefix+"/gc", strings.NewReader(body))
		req.Header.Set("Authorization", key)
		resp, err := srv.Client().Do(req)
		must(t, err)
		var rep GCReport
		err = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || rep.KeptPaths != 2 || len(rep.Deleted) != 1 || rep.Deleted[0].Size != 7 {
			t.Fatalf("body %q: %d %+v %v", body, resp.StatusCode, rep, err)
		}
	}
	if len(calls) != 2 || !calls[0] || calls[1] {
		t.Fatalf("dry runs passed %v, want [true false]", calls)
	}
}
