package forgestatus

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SignatureHeader carries the outgoing webhook's signature: "sha256=" and the hex HMAC-SHA256
// of the body under the project's secret.
const SignatureHeader = "X-Gradient-Signature-256"

// EventHeader names the event kind ("evaluation" or "build").
const EventHeader = "X-Gradient-Event"

// Event is the outgoing webhook's JSON body (gradient-server §12.3).
type Event struct {
	Kind         string    `json:"event"` // "evaluation" or "build"
	DeliveryID   string    `json:"delivery_id"`
	Project      string    `json:"project"`
	ProjectID    string    `json:"project_id"`
	EvaluationID string    `json:"evaluation_id"`
	BuildID      string    `json:"build_id,omitempty"`
	Attr         string    `json:"attr,omitempty"`
	Commit       string    `json:"commit"`
	State        State     `json:"state"`
	Context      string    `json:"context"`
	Description  string    `json:"description,omitempty"`
	TargetURL    string    `json:"target_url,omitempty"`
	At           time.Time `json:"at"`
}

// WebhookRequest makes the request that delivers ev to url, signed with secret.
func WebhookRequest(url string, secret []byte, ev Event) (Request, error) {
	if err := ValidateURL(url); err != nil {
		return Request{}, err
	}
	if len(secret) == 0 {
		return Request{}, fmt.Errorf("webhook secret: empty: %w", ErrInvalid)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return Request{}, fmt.Errorf("webhook body: %w", err)
	}
	return Request{Method: "POST", URL: url, Body: body, Header: map[string]string{
		"Content-Type": "application/json", SignatureHeader: Sign(secret, body), EventHeader: ev.Kind}}, nil
}

// Sign is the signature header's value for body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signature header against body in constant time, for receivers of the
// webhook (and the tests): false for any malformed header.
func Verify(secret, body []byte, header string) bool {
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSum) != 2*sha256.Size {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
