package admincli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
)

// peerFlags registers --project and --cache; exactly one must be given.
func peerFlags(fs *flag.FlagSet) func() (apiclient.Peer, error) {
	project := fs.String("project", "", "the registering project (ID or name)")
	cache := fs.String("cache", "", "the registering cache (ID or name)")
	return func() (apiclient.Peer, error) {
		switch {
		case (*project == "") == (*cache == ""):
			return apiclient.Peer{}, usagef("give exactly one of --project and --cache")
		case *project != "":
			return apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: *project}, nil
		default:
			return apiclient.Peer{Kind: apiclient.CachePeer, Ref: *cache}, nil
		}
	}
}

func workerRegister() command {
	return command{path: "worker register", args: []string{"WORKER_ID"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		peer := peerFlags(fs)
		name := fs.String("name", "", "display name")
		url := fs.String("url", "", "ws:// or wss:// URL for a server-dialed worker")
		noFetch := fs.Bool("no-fetch", false, "do not let this peer's jobs fetch on the worker")
		noEval := fs.Bool("no-eval", false, "do not let this peer's jobs evaluate on the worker")
		noBuild := fs.Bool("no-build", false, "do not let this peer's jobs build on the worker")
		return func(in *invocation) error {
			p, err := peer()
			if err != nil {
				return err
			}
			fetch, eval, build := !*noFetch, !*noEval, !*noBuild
			resp, err := in.client.RegisterWorker(in.ctx, p, api.RegisterWorkerRequest{WorkerID: in.args[0],
				URL: *url, DisplayName: *name, EnableFetch: &fetch, EnableEval: &eval, EnableBuild: &build})
			if err != nil {
				return err
			}
			for _, warning := range resp.Warnings {
				fmt.Fprintln(in.diag, "warning:", warning)
			}
			return in.emit(resp, func(w io.Writer) { printRegistered(w, resp) })
		}
	}}
}

func printRegistered(w io.Writer, resp api.RegisterWorkerResponse) {
	r := resp.Registration
	fmt.Fprintf(w, "Registered worker %s for %s %s (peer %s).\n", r.WorkerID, r.PeerKind, r.PeerName, r.PeerID)
	fmt.Fprintf(w, "Peer token, shown this once (only its hash is stored):\n\n  %s\n\n", resp.Token)
	fmt.Fprintf(w, "Add this line to the worker's peers file (GRADIENT_WORKER_PEERS_FILE):\n\n  %s\n", resp.PeersFileLine)
}

func workerSetActive(active bool) command {
	path, done := "worker deactivate", "Deactivated"
	if active {
		path, done = "worker activate", "Activated"
	}
	return command{path: path, args: []string{"WORKER_ID"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		peer := peerFlags(fs)
		return func(in *invocation) error {
			p, err := peer()
			if err != nil {
				return err
			}
			r, err := in.client.SetRegistrationActive(in.ctx, p, in.args[0], active)
			if err != nil {
				return err
			}
			return in.emit(r, func(w io.Writer) {
				fmt.Fprintf(w, "%s worker %s for %s %s.\n", done, r.WorkerID, r.PeerKind, r.PeerName)
			})
		}
	}}
}

func workerList() command {
	return command{path: "worker list", setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			ws, err := in.client.Workers(in.ctx)
			if err != nil {
				return err
			}
			return in.emit(api.WorkerList{Workers: ws}, func(w io.Writer) {
				t := newTable(w, "WORKER ID", "NAME", "STATUS", "CONNECTED", "LAST SEEN", "CAPABILITIES", "REASON")
				for _, wk := range ws {
					t.row(wk.WorkerID, orDash(wk.DisplayName), wk.Status, stamp(wk.ConnectedAt), stamp(wk.LastSeenAt),
						capabilityList(wk.Capabilities), orDash(workerReason(wk)))
				}
				t.flush()
			})
		}
	}}
}

func workerShow() command {
	return command{path: "worker show", args: []string{"WORKER_ID"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			wk, err := in.client.Worker(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(wk, func(w io.Writer) {
				fields(w, "Worker", wk.WorkerID, "Name", orDash(wk.DisplayName), "Status", wk.Status,
					"Connected", stamp(wk.ConnectedAt), "Last seen", stamp(wk.LastSeenAt),
					"Capabilities", capabilityList(wk.Capabilities), "Authorized peers", orDash(strings.Join(wk.AuthorizedPeers, ", ")),
					"Reason", orDash(workerReason(wk)))
				fmt.Fprintln(w)
				t := newTable(w, "PEER", "KIND", "PEER ID", "ACTIVE", "FETCH", "EVAL", "BUILD", "URL")
				for _, r := range wk.Registrations {
					t.row(orDash(r.PeerName), r.PeerKind, r.PeerID, yesNo(r.Active), yesNo(r.EnableFetch),
						yesNo(r.EnableEval), yesNo(r.EnableBuild), orDash(r.URL))
				}
				t.flush()
			})
		}
	}}
}

// workerReason is what an operator needs to know about a worker's state: why a live worker
// is quarantined, or why an offline one went offline.
func workerReason(wk api.Worker) string {
	if wk.Quarantined != "" {
		return "quarantined: " + wk.Quarantined
	}
	return wk.OfflineReason
}

// capabilityList names a live session's enabled capabilities, "-" when offline.
func capabilityList(c *api.Capabilities) string {
	if c == nil {
		return "-"
	}
	var names []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Fetch, "fetch"}, {c.Eval, "eval"}, {c.Build, "build"}, {c.Cache, "cache"}, {c.Federate, "federate"}} {
		if f.on {
			names = append(names, f.name)
		}
	}
	return orDash(strings.Join(names, ","))
}
