// Package trigger starts evaluations when a project's repository moves (gradient-server §11):
// a poller that runs one bounded `git ls-remote` per polling project per round, the push
// webhook endpoint /api/v1/hooks/{forge}/{project} (signature first, then the event), and the
// branch resolution behind `admin eval start PROJECT BRANCH`. Heads go to
// store.TriggerEvaluation, which makes one evaluation per new head commit whichever way it
// arrived. The pure parts are gitref (listings, globs) and forgehook (deliveries).
package trigger
