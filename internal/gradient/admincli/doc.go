// Package admincli is `gradient-server admin …`: the operator's commands. `bootstrap` opens
// the server's store directly (the SQLite database in --data-dir, or --database-url) to
// create the first API key; every other command calls the running server's /api/v1 with
// an API key (--api-key, or better GRADIENT_API_KEY, which stays out of the process list).
//
// Output is human-readable tables, or the API's JSON with --json. API keys and peer tokens
// are printed only by the commands that create them, once. Exit codes: 0 success, 1 a
// server or API error, 2 a usage error.
package admincli

// Usage is the help text.
const Usage = `usage: gradient-server admin <command> [flags]

First key (talks to the database directly, run on the server's machine):
  bootstrap [--data-dir DIR | --database-url URL] [--owner NAME]

Everything else talks to the server (--server URL, env GRADIENT_SERVER, default
http://127.0.0.1:3000) with an API key (env GRADIENT_API_KEY, or --api-key):
  project create NAME --repo-url URL --wildcard PATTERNS [--wildcard ...] [--branch B] [--force-evaluation]
  project list
  project show PROJECT
  project set PROJECT [--branch PATTERN ...] [--default-branch] [--tags[=false]] [--poll on|off]
              [--webhook-secret-file FILE | --no-webhook-secret]
  project ssh-key generate PROJECT          (prints the public key for the forge's deploy keys)
  project ssh-key set PROJECT --key-file FILE
  project ssh-key show PROJECT
  project ssh-key remove PROJECT
  project https-token set PROJECT --token-file FILE [--username NAME]
  project https-token remove PROJECT
  project status PROJECT [--forge github|gitea|gitlab|none --api-url URL --repo OWNER/REPO --token-file FILE]
                 [--per-build on|off] [--notify-url URL --notify-secret-file FILE]
  cache create NAME [--public]
  cache list
  cache key CACHE
  cache paths CACHE [--limit N]
  cache upstream add CACHE URL --key NAME:BASE64   (http, https or file; workers substitute from it)
  cache upstream remove CACHE URL
  cache upstream list CACHE
  cache subscribe PROJECT CACHE
  cache unsubscribe PROJECT CACHE
  worker register WORKER_ID (--project P | --cache C) [--name NAME] [--url wss://...] [--no-fetch] [--no-eval] [--no-build]
  worker deactivate WORKER_ID (--project P | --cache C)
  worker activate WORKER_ID (--project P | --cache C)
  worker list
  worker show WORKER_ID
  project workers PROJECT        (live only when authenticated for PROJECT)
  team create NAME
  team list
  team show TEAM
  team register TEAM WORKER_ID [--url wss://...]
  team grant PROJECT TEAM
  team revoke PROJECT TEAM
  team disable TEAM WORKER_ID
  team enable TEAM WORKER_ID
  eval start PROJECT COMMIT|BRANCH [--wildcard PATTERNS ...]
  eval list PROJECT [--limit N]
  eval show EVALUATION_ID
  build show BUILD_ID
  build log BUILD_ID [--attempt ATTEMPT_ID] [--offset N] [--limit N | --follow]
  abort eval EVALUATION_ID [--reason TEXT]
  abort build BUILD_ID [--reason TEXT]
  key create --owner NAME [--cache CACHE]
  key list
  key revoke KEY_ID

PROJECT, CACHE and TEAM are an ID or a name. Every command takes --json for machine output.
Exit codes: 0 ok, 1 server or API error, 2 usage error.
`
