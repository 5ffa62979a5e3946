// Package gitref is the pure half of following a repository's branches and tags
// (gradient-server §11): it reads `git ls-remote --symref` output into heads, matches ref
// names against a project's branch patterns, and decides which heads a project follows. It
// does no I/O; the caller runs git and bounds its output.
//
// Patterns are globs over branch names: `*` matches any run of characters except `/`, `**`
// any run including `/`, `?` one character other than `/`; everything else matches itself.
// A project with no patterns follows its default branch only.
package gitref
