package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// pageSet is every page's template, each parsed with the layout.
type pageSet map[string]*template.Template

var pageNames = []string{"signin", "error", "projects", "project", "evaluation", "build", "workers", "caches", "queue"}

func mustParsePages() pageSet {
	out := pageSet{}
	for _, name := range pageNames {
		t := template.New("layout.html").Funcs(funcs)
		out[name] = template.Must(t.ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

var funcs = template.FuncMap{
	"stamp": stamp,
	"since": since,
	"short": short,
	"bytes": humanBytes,
}

// page is what the layout needs beside a page's own data.
type page struct {
	Title    string
	SignedIn bool
	Admin    bool
	Owner    string
	CSRF     string
	Data     any
}

// render writes a page; a template error is a 500 with the cause logged.
func (u *UI) render(w http.ResponseWriter, r *http.Request, v viewer, status int, name string, data any) {
	var buf bytes.Buffer
	p := page{Title: titleOf(name), SignedIn: v.signedIn, Admin: v.admin(), Owner: v.key.Owner, CSRF: v.csrf, Data: data}
	if err := u.pages[name].Execute(&buf, p); err != nil {
		u.cfg.Logger.Error("web UI: rendering", "page", name, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error (see the server log)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail renders the error page.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, v viewer, status int, msg string) {
	u.render(w, r, v, status, "error", map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg})
}

// failErr is fail for a store or API error: its cause logged, a plain message shown.
func (u *UI) failErr(w http.ResponseWriter, r *http.Request, v viewer, err error) {
	u.cfg.Logger.Error("web UI request failed", "path", r.URL.Path, "err", err)
	u.fail(w, r, v, http.StatusInternalServerError, "Something failed on the server (see its log).")
}

func titleOf(name string) string {
	switch name {
	case "signin":
		return "Sign in"
	case "error":
		return "Error"
	}
	return string(name[0]-'a'+'A') + name[1:]
}

// serveAsset serves the embedded style sheet and script.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, err := assetFiles.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(data)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// since is the duration from a to b ("—" when either is unknown).
func since(a, b time.Time) string {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return "—"
	}
	return b.Sub(a).Round(time.Second).String()
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
