package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// maxBodyBytes bounds a request body; every request here is a few hundred bytes.
const maxBodyBytes = 1 << 20

// httpError is a refusal with its status and code, returned by handlers.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.msg) }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf(format, args...)}
}
func unauthorized(msg string) error {
	return &httpError{http.StatusUnauthorized, CodeUnauthorized, msg}
}
func forbidden(msg string) error { return &httpError{http.StatusForbidden, CodeForbidden, msg} }
func notFound(format string, args ...any) error {
	return &httpError{http.StatusNotFound, CodeNotFound, fmt.Sprintf(format, args...)}
}
func conflict(code, format string, args ...any) error {
	return &httpError{http.StatusConflict, code, fmt.Sprintf(format, args...)}
}

// fail answers err: refusals as they are, store sentinels by meaning, anything else 500
// with the cause logged and not sent (it may name tables or paths).
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		writeError(w, he.status, he.code, he.msg)
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, "request body over 1 MiB")
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, CodeNotFound, "not found")
	case errors.Is(err, store.ErrWorkerIDTaken):
		writeError(w, http.StatusConflict, CodeWorkerIDTaken, "the worker ID belongs to a team worker")
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrAlreadyBootstrapped):
		writeError(w, http.StatusConflict, CodeConflict, "already exists")
	case errors.Is(err, store.ErrInvalid):
		writeError(w, http.StatusBadRequest, CodeBadRequest, "invalid argument")
	default:
		a.log.LogAttrs(r.Context(), slog.LevelError, "api request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		writeError(w, http.StatusInternalServerError, CodeInternal, "internal error (see the server log)")
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, Error{Message: msg, Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only our own types are written; they always marshal
		status, body = http.StatusInternalServerError, []byte(`{"error":"encoding failed","code":"internal"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// decodeBody reads one JSON object of at most maxBodyBytes, refusing unknown fields and
// trailing data, so a typo in a field name is an error rather than a silent default.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := readBody(w, r)
	if err != nil {
		return err
	}
	return decodeJSON(data, v)
}

// decodeOptionalBody is decodeBody for routes whose body may be left out.
func decodeOptionalBody(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := readBody(w, r)
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return err
	}
	return decodeJSON(data, v)
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return data, nil
}

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("invalid JSON body: data after the object")
	}
	return nil
}

func levelFor(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelInfo
}
