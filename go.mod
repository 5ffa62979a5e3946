module github.com/buildfleet/buildfleet

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/zeebo/blake3 v0.2.4
	golang.org/x/sys v0.50.0
	lukechampine.com/blake3 v1.4.1
	pgregory.net/rapid v1.3.0
)

require (
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
)
