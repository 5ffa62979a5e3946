// Package archtest holds the repository's structural tests: every package documents itself, the
// two systems never import each other, and pace-cc stays small. It has no code of its own.
package archtest
