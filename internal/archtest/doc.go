// Package archtest holds the repository's structural tests: every package documents itself, the
// two systems never import each other (commands and load generators included, each named in one
// table with its system), mains stay thin, pace-cc stays small, every section citation in the code
// resolves to a heading of a design document under docs/, and the floor plan
// (docs/ARCHITECTURE.md) lists every package. It has no code of its own.
package archtest
