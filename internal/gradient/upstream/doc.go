// Package upstream lets a gradient cache answer for paths its upstream binary caches hold
// (gradient-server §14): the operator's URL and key checks, a bounded narinfo parser, the
// signature check against the key trusted for that upstream, and a Resolver that fetches a
// narinfo over http, https or file and turns a verified one into a CacheQuery answer.
package upstream
