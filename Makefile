# yagent — build, run, test.
GO       ?= go
BIN      := bin
PLUGINS  := fs shell search browser cognitive
EXAMPLES := hello
WORKSPACE ?= $(CURDIR)
PROFILE   ?= full

.PHONY: all build run test test-short bench soak lint cross dist mutants proto proto-check fuzz deploy-check deploy-schemas clean

all: build

## build: bin/plugins/yagent-plugin-* (from cmd/yagent-plugin-*), then bin/yagent linked with their sums (scripts/sums.sh:
## the host trusts those very binaries, even in a folder commands can write, such as this
## clone when it is the workspace), and the example plugins under bin/examples
## (what it runs is echoed to stderr: make run's stdout is MCP's alone)
build:
	@mkdir -p $(BIN)/plugins $(BIN)/examples
	@for p in $(PLUGINS); do \
		if [ -f cmd/yagent-plugin-$$p/main.go ]; then \
			echo "$(GO) build -o $(BIN)/plugins/yagent-plugin-$$p ./cmd/yagent-plugin-$$p" >&2; \
			$(GO) build -o $(BIN)/plugins/yagent-plugin-$$p ./cmd/yagent-plugin-$$p || exit 1; \
		fi; \
	done
	@ld="$$(scripts/sums.sh --ldflags $(BIN)/plugins $(PLUGINS))" && \
		echo "$(GO) build -ldflags \"$$ld\" -o $(BIN)/yagent ./cmd/yagent" >&2 && \
		$(GO) build -ldflags "$$ld" -o $(BIN)/yagent ./cmd/yagent
	@for e in $(EXAMPLES); do \
		if [ -f examples/$$e/main.go ]; then \
			n=$$(basename $$e); \
			echo "$(GO) build -o $(BIN)/examples/yagent-plugin-$$n ./examples/$$e" >&2; \
			$(GO) build -o $(BIN)/examples/yagent-plugin-$$n ./examples/$$e || exit 1; \
		fi; \
	done

## run: build everything and serve the merged surface of all plugins over MCP (stdio) on this folder
run: build
	@$(BIN)/yagent serve --workspace "$(WORKSPACE)" --profile $(PROFILE)

## test: build what the tests need, then every test with the race detector (and quietio's raw path without it)
test: build
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 ./internal/quietio

test-short:
	$(GO) test -short ./...

## bench: Go benchmarks and the scripts under bench/, rewriting BENCHMARKS.md
bench: build
	@if [ -x bench/run.sh ]; then bench/run.sh; else $(GO) test -run '^$$' -bench . -benchmem ./...; fi

## soak: 10,000 mixed calls through one bin/yagent serve; the host and plugins must not grow
soak: build
	YAGENT_SOAK=1 $(GO) test -count=1 -v -run TestSoak ./test/soak

## lint: formatting, tidy modules and vet
lint:
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## cross: build the host, the plugins and the examples for linux and darwin (amd64, arm64) and
## vet them there with the test files; the sdk and the hello example for windows and freebsd
cross:
	scripts/cross.sh

## dist: release archives for linux and darwin (amd64, arm64), each built as make build builds
## (the plugins, then the host linked with their sums), reproducibly: dist/yagent_<version>_<os>_<arch>.tar.gz
## and dist/SHA256SUMS (scripts/dist.sh says what makes two builds of a commit the same bytes)
dist:
	scripts/dist.sh

## mutants: apply each patch under testdata/mutants and demand that its gate test goes red
mutants: build
	scripts/mutants.sh

## proto: regenerate sdk/proto with the pinned generators, and the Python example's
## examples/python/plugin_pb2.py with protoc; proto-check fails when either is stale
proto:
	scripts/proto.sh

proto-check:
	scripts/proto.sh --check

## fuzz: run every fuzz target for FUZZTIME each
FUZZTIME ?= 30s
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## deploy-check: validate deploy/k8s with kubeconform against the vendored schemas (and as
## kustomize renders it); read deploy/Dockerfile with BuildKit's parser and linter, and build
## it where a Docker engine answers
deploy-check:
	deploy/check.sh

## deploy-schemas: regenerate deploy/schemas from the Kubernetes OpenAPI document (Go module proxy)
deploy-schemas:
	cd deploy/tools && $(GO) run ./schemagen -k8s v1.31.0 -out ../schemas \
		StatefulSet.apps/v1 Service.v1 Secret.v1 Ingress.networking.k8s.io/v1

clean:
	rm -rf $(BIN)
