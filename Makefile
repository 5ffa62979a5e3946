# buildfleet: pace (compiler cache and distributed compiles) and gradient (Nix CI worker protocol).
# Quick start on a fresh Debian machine with Go: `make demo`, then `make test`.

GO        ?= go
BIN       := bin
export CGO_ENABLED := 0
TESTFLAGS ?= -timeout 28m
FUZZTIME  ?= 30s

.PHONY: all build test vet demo bench fuzz deps clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

deps:
	scripts/deps.sh test

vet:
	$(GO) vet ./...

# Everything CI checks. Installs what the tests need when it is missing.
test:
	scripts/deps.sh test
	$(GO) vet ./...
	scripts/test.sh $(TESTFLAGS)

demo:
	scripts/deps.sh demo
	$(MAKE) build
	scripts/demo.sh

# Benchmarks that compare against other tools in the same run; figures go to stdout.
bench:
	scripts/deps.sh bench
	$(MAKE) build
	scripts/bench.sh

fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

clean:
	rm -rf $(BIN)
