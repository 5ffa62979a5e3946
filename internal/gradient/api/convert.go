package api

import (
	"encoding/json"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// Conversions from the store's rows to the API's JSON shapes. Lists are never null.

func projectOf(p store.Project) Project {
	return Project{ID: p.ID, Name: p.Name, RepoURL: p.RepoURL, Branch: p.Branch, Wildcards: nonNil(p.Wildcards),
		ForceEvaluation: p.ForceEvaluation, HasSSHKey: p.HasSSHKey, CreatedAt: p.CreatedAt}
}

func cacheOf(c store.Cache) Cache {
	return Cache{ID: c.ID, Name: c.Name, Public: c.Public, HasSigningKey: len(c.SigningKeyEnc) > 0, CreatedAt: c.CreatedAt}
}

func registrationOf(r store.Registration, peerNames map[string]string) Registration {
	return Registration{ID: r.ID, PeerID: r.PeerID, PeerKind: r.PeerKind.String(), PeerName: peerNames[r.PeerID],
		WorkerID: r.WorkerID, Active: r.Active, EnableFetch: r.EnableFetch, EnableEval: r.EnableEval,
		EnableBuild: r.EnableBuild, DisplayName: r.DisplayName, URL: r.URL, HasDialToken: r.HasDialToken,
		CreatedAt: r.CreatedAt}
}

func apiKeyOf(k store.APIKey) APIKey {
	return APIKey{ID: k.ID, Owner: k.Owner, CacheID: k.CacheID, Active: k.RevokedAt.IsZero(),
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

func evaluationOf(e store.Evaluation) Evaluation {
	return Evaluation{ID: e.ID, ProjectID: e.ProjectID, Commit: e.Commit, Branch: e.Branch, Wildcards: nonNil(e.Wildcards),
		Status: e.Status.String(), StatusCode: int(e.Status), FlakeSource: e.FlakeSource, Attempts: e.Attempts,
		EvalDispatches: e.EvalDispatches, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func buildOf(b store.BuildInfo) Build {
	return Build{ID: b.ID, DerivationID: b.DerivationID, DrvPath: b.DrvPath, System: b.System, Pname: b.Pname,
		Status: b.Status.String(), StatusCode: int(b.Status), Attempt: b.Attempt, LostWorkerStreak: b.LostWorkerStreak,
		Substituted: b.Substituted, EntryPoints: b.EntryPoints, NotBefore: b.NotBefore, QueuedAt: b.QueuedAt,
		DispatchedAt: b.DispatchedAt, UpdatedAt: b.UpdatedAt}
}

func attemptOf(a store.Attempt) Attempt {
	return Attempt{ID: a.ID, BuildID: a.BuildID, AssignmentID: a.AssignmentID, WorkerID: a.WorkerID,
		Outcome: a.Outcome.String(), OutcomeCode: int(a.Outcome), FailureReason: a.FailureReason,
		StartedAt: a.StartedAt, FinishedAt: a.FinishedAt, LogBytes: a.LogBytes}
}

func messageOf(m store.Message) Message {
	return Message{Level: m.Level.String(), Source: m.Source, Text: m.Text, CreatedAt: m.CreatedAt}
}

func capabilitiesOf(c wire.GradientCapabilities) *Capabilities {
	return &Capabilities{Core: c.Core, Federate: c.Federate, Fetch: c.Fetch, Eval: c.Eval, Build: c.Build, Cache: c.Cache}
}

// workerOf overlays a stored worker with its live session, if it has one.
func workerOf(w store.WorkerInfo, live LiveWorker, isLive bool) Worker {
	out := Worker{WorkerID: w.WorkerID, DisplayName: w.DisplayName, Registered: w.Registered,
		Status: WorkerOffline, ConnectedAt: w.LastConnectedAt, LastSeenAt: w.LastSeenAt,
		OfflineReason: w.OfflineReason}
	if json.Valid(w.Capabilities) {
		out.ReportedCapabilities = json.RawMessage(w.Capabilities)
	}
	if isLive {
		out.Status, out.ConnectedAt, out.OfflineReason, out.Remote = WorkerLive, live.ConnectedAt, "", live.Remote
		out.AuthorizedPeers = nonNil(live.Authorized)
		out.Capabilities = capabilitiesOf(live.Capabilities)
		out.Quarantined = live.Quarantined
	}
	return out
}

// mapSlice converts every element.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
