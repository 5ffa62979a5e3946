// Command fakeforge shows what a forge would receive from gradient-server's commit statuses
// and outgoing webhook (gradient-server §12), for the demo: it listens on loopback, prints
// "fakeforge ready url=http://ADDR" and then one line per request — the forge the path
// names (GitHub, Gitea/Forgejo or GitLab, read by forgestatus.Decode), repository, commit,
// state, context, target URL, description and whether the token matched; for anything else,
// a webhook event with whether its signature verified. --fail-first N answers the first N
// requests 500, to show the server retrying.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
)

type forge struct {
	token, secret string
	failFirst     int64
	seen          atomic.Int64
	mu            sync.Mutex
	out           *bufio.Writer
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback `address` to listen on")
	tokenFile := flag.String("token-file", "", "`file` with the token statuses must carry (unchecked when empty)")
	secretFile := flag.String("secret-file", "", "`file` with the webhook secret its signatures are checked with")
	failFirst := flag.Int64("fail-first", 0, "answer the first `N` requests 500")
	flag.Parse()
	f := &forge{token: readFile(*tokenFile), secret: readFile(*secretFile), failFirst: *failFirst, out: bufio.NewWriter(os.Stdout)}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeforge:", err)
		os.Exit(1)
	}
	f.print("fakeforge ready url=http://%s", ln.Addr())
	fmt.Fprintln(os.Stderr, "fakeforge:", http.Serve(ln, f))
	os.Exit(1)
}

func readFile(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeforge:", err)
		os.Exit(2)
	}
	return strings.TrimSpace(string(b))
}

func (f *forge) print(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.out, format+"\n", args...)
	f.out.Flush()
}

func (f *forge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	n := f.seen.Add(1)
	answer := http.StatusCreated
	if n <= f.failFirst {
		answer = http.StatusInternalServerError
	}
	rec, err := forgestatus.Decode(r.Method, r.URL.EscapedPath(), firstValues(r.Header), body)
	switch {
	case err == nil:
		tokenOK := f.token == "" || rec.Token == f.token
		if !tokenOK {
			answer = http.StatusUnauthorized
		}
		f.print("%d %s %s %s state=%s context=%s target=%s description=%q token=%s -> %d", n, rec.Forge, rec.Repo,
			rec.Commit, rec.State, rec.Context, rec.TargetURL, rec.Description, okBad(tokenOK), answer)
	case r.Header.Get(forgestatus.SignatureHeader) != "":
		f.webhook(n, r, body, answer)
	default:
		answer = http.StatusBadRequest
		f.print("%d refused %s %s: %v -> %d", n, r.Method, r.URL.Path, err, answer)
	}
	w.WriteHeader(answer)
}

func (f *forge) webhook(n int64, r *http.Request, body []byte, answer int) {
	sigOK := f.secret != "" && forgestatus.Verify([]byte(f.secret), body, r.Header.Get(forgestatus.SignatureHeader))
	var ev forgestatus.Event
	if sigOK {
		json.Unmarshal(body, &ev) // parsed only once the signature verified
	}
	f.print("%d webhook %s %s state=%s context=%s commit=%s target=%s signature=%s -> %d", n, r.URL.Path, ev.Kind,
		ev.State, ev.Context, ev.Commit, ev.TargetURL, okBad(sigOK), answer)
}

func firstValues(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

func okBad(ok bool) string {
	if ok {
		return "ok"
	}
	return "bad"
}
