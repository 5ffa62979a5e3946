# buildfleet: pace (compiler cache and distributed compiles) and gradient (Nix CI worker protocol).
# Quick start on a fresh Debian machine with Go: `make demo`, then `make test`.

GO        ?= go
BIN       := bin
export CGO_ENABLED := 0
TESTFLAGS ?= -timeout 28m
FUZZTIME  ?= 30s

.PHONY: all build test vet verify race demo bench soak fuzz deps clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

deps:
	scripts/deps.sh test

vet:
	$(GO) vet ./...

# The checks that need no services: formatting, a tidy go.mod, vet, staticcheck (a tool of
# go.mod, so its version is the module's) and the architecture tests. CI runs it first.
verify:
	@echo "gofmt -l ."; files=$$(gofmt -l .); \
	  if [ -n "$$files" ]; then echo "gofmt: these files are not formatted (gofmt -w them):"; echo "$$files"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) test -count=1 ./internal/archtest/

# The packages that run goroutines of their own, under the race detector. -race needs cgo (and
# gcc), so this run alone overrides the CGO_ENABLED=0 every build gets.
RACE_PKGS := \
  ./internal/pace/frameserver/ ./internal/pace/tier/ ./internal/pace/store/ ./internal/pace/worker/ \
  ./internal/pace/scheduler/ ./internal/pace/consensus/ ./internal/pace/kv/ ./internal/pace/kvclient/ \
  ./internal/pace/nodeproof/sealedconn/ ./internal/pace/node/ ./internal/pace/ccstats/ \
  ./internal/pace/peerlink/peerconn/ ./internal/pace/raftnet/ ./internal/pace/discovery/ \
  ./internal/gradient/wsconn/ ./internal/gradient/server/ ./internal/gradient/cacheserve/ \
  ./internal/gradient/narstore/ ./internal/gradient/worker/ ./internal/gradient/loghub/ \
  ./internal/gradient/statussender/
race:
	scripts/deps.sh test
	CGO_ENABLED=1 $(GO) test -race -count=1 $(RACE_PKGS)

# The test suite (make verify holds the static checks). Installs what the tests need when it
# is missing.
test:
	scripts/deps.sh test
	PACE_REQUIRE_BROWSER=1 GRADIENT_REQUIRE_BROWSER=1 scripts/test.sh $(TESTFLAGS)

demo:
	scripts/deps.sh demo
	$(MAKE) build
	scripts/demo.sh

# Benchmarks that compare against other tools in the same run; figures go to stdout.
bench:
	scripts/deps.sh bench
	$(MAKE) build
	scripts/bench.sh

# soak: a bounded hostile mix against pace-kv, a pace-node port and gradient-server while a
# polite client measures its latency alone and under the attack (about 5 minutes).
soak:
	scripts/deps.sh test
	$(MAKE) build
	scripts/soak-pace.sh
	go run ./bench/hostilegradient -duration=$${SOAK_DURATION:-60s} -server-bin bin/gradient-server

fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

clean:
	rm -rf $(BIN)
