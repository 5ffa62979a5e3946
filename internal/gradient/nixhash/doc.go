// Package nixhash reads and writes the hash texts gradient exchanges with Nix and its
// workers: Nix's base-32 encoding (the 52-character form of a SHA-256 in store paths and
// narinfo files) and SHA-256 hash strings.
//
// Nix's base-32 is not RFC 4648: its alphabet omits e, o, t and u, and it writes the
// number least significant bits last, reading the hash bytes least significant first, so
// the last character holds the low five bits of byte 0. A string whose value does not fit
// the byte count is refused, as Nix refuses it ("invalid base-32 hash").
//
// Parse accepts the three forms gradient-server §10.2 names: "sha256:<nix32>" (52
// characters), "sha256:<hex>" (64, either case) and SRI "sha256-<base64>" (44 with
// padding). String writes the canonical "sha256:<nix32>". The package is pure.
package nixhash
