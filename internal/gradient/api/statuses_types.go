package api

import "time"

// SetProjectStatusRequest is PUT /api/v1/projects/{project}/status (gradient-server §12):
// absent fields keep their value. Forge "none" turns forge statuses off (and forgets the
// token); NotifyURL "" turns the webhook off (and forgets the secret). Token and
// NotifySecret are sealed at rest and never returned.
type SetProjectStatusRequest struct {
	Forge        *string `json:"forge,omitempty"` // github, gitea, forgejo, gitlab or none
	APIURL       *string `json:"api_url,omitempty"`
	Repo         *string `json:"repo,omitempty"`
	Token        *string `json:"token,omitempty"`
	PerBuild     *bool   `json:"per_build,omitempty"`
	NotifyURL    *string `json:"notify_url,omitempty"`
	NotifySecret *string `json:"notify_secret,omitempty"`
}

// ProjectStatus is a project's status settings, without the secrets.
type ProjectStatus struct {
	Project         string    `json:"project"`
	Forge           string    `json:"forge,omitempty"`
	APIURL          string    `json:"api_url,omitempty"`
	Repo            string    `json:"repo,omitempty"`
	TokenSet        bool      `json:"token_set"`
	PerBuild        bool      `json:"per_build"`
	NotifyURL       string    `json:"notify_url,omitempty"`
	NotifySecretSet bool      `json:"notify_secret_set"`
	UpdatedAt       time.Time `json:"updated_at,omitzero"`
}

// StatusDelivery is one status of an evaluation for one sink and its delivery state
// (GET /evaluations/{id}).
type StatusDelivery struct {
	Sink        string    `json:"sink"` // forge or webhook
	Context     string    `json:"context"`
	State       string    `json:"state"`
	Description string    `json:"description,omitempty"`
	BuildID     string    `json:"build_id,omitempty"`
	Attr        string    `json:"attr,omitempty"`
	Delivery    string    `json:"delivery"` // queued, delivered, failed or superseded
	Attempts    int       `json:"attempts"`
	LastError   string    `json:"last_error,omitempty"`
	LastHTTP    int       `json:"last_http,omitempty"`
	NextAttempt time.Time `json:"next_attempt_at,omitzero"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
}
