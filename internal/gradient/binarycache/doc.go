// Package binarycache serves a gradient cache to Nix itself, as an HTTP binary cache under
// /cache/{cache}/ (gradient-protocol §7): nix-cache-info, {hash}.narinfo and
// nar/{file_hash}.nar.zst, so that `nix copy --from` and `--substituters` fetch what
// gradient built and verify it against the cache's public key.
//
// # Keys and signatures
//
// Every cache has an ed25519 key pair, made when the cache is created (Keys.Create) and
// kept sealed with aeadbox under PurposeSigningKey. The sealed value is the Nix secret
// key text "name:base64(private key)", so the key's name travels with it. The name is
// "<host>-<cache>-1" (Keys.Host, "gradient" by default; the "-1" leaves room for a
// rotation). Keys.PublicKey gives the "name:base64(public key)" line a user puts in
// trusted-public-keys.
//
// A narinfo's Sig is Nix's: the key name, a colon, and the base64 ed25519 signature of the
// fingerprint "1;<store path>;<nar hash sha256:nix32>;<nar size>;<references as full
// store paths, sorted, comma-joined>". The signature is computed when the narinfo is
// served (ed25519 is deterministic and cheap) and recorded with SignCachedPath when the
// stored one differs, so cache-session Pull answers carry it too.
//
// # Access
//
// Public caches are read anonymously unless Config.DenyAnonymous; private caches need an
// API key in "Authorization: GRAD<key>", "Bearer GRAD<key>", or HTTP Basic with the key as
// the password (Nix sends credentials from its netrc file as Basic). A key pinned to
// another cache is refused 403. Without a valid key a private cache and an unknown one
// both answer 401, so anonymous callers cannot probe which private caches exist. Admit is
// the same check for the server's /cache/{cache}/proto upgrade.
//
// # Never serving bad bytes
//
// The NAR files are stored zstd-compressed exactly as uploaded (narstore), so a NAR is
// served as the file. Before any byte goes out the object must exist with the recorded
// FileSize; while it streams, its SHA-256 is computed and the last block is held back until
// the hash matches the recorded FileHash. On a mismatch the response is cut short (the
// client sees fewer bytes than Content-Length and fails) or, when the whole object fits
// in the first block, answered 404. Either way the row is demoted, so the next narinfo
// request answers 404 and the producing worker uploads the path again.
package binarycache
