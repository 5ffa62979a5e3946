// Package cc is pace-cc: the compiler wrapper that derives a key, serves hits from the cache, and
// on a miss compiles (locally or dispatched) and stores the result, never failing a build.
package cc
