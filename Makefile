# ceres-export: on a fresh Debian 12 machine `make demo` and `make test` do all
# the set-up themselves (every target depends on deps).

GO        ?= go
BIN       := bin/ceres-export
CACHE     := .cache
DEMO_DIR  := $(CACHE)/demo
APT_PKGS  := pkg-config ffmpeg libavcodec-dev libavformat-dev libavutil-dev \
             libswscale-dev libswresample-dev libavfilter-dev libavdevice-dev
PKGCONFIG := libavcodec libavformat libavutil libswscale libswresample libavfilter libavdevice

.PHONY: all deps build test demo bench conformance fuzz vet clean

all: build

# deps installs what a fresh machine lacks: FFmpeg 5.1 dev packages and the
# ffmpeg CLI (the benchmark's reference), Go modules, and the RFC 8785 npm
# package the canonicalisation cross-check runs under node.
deps: $(CACHE)/deps.stamp

$(CACHE)/deps.stamp: go.mod go.sum Makefile
	@mkdir -p $(CACHE)
	@if ! pkg-config --exists $(PKGCONFIG) 2>/dev/null || ! command -v ffmpeg >/dev/null; then \
		echo "installing FFmpeg development packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PKGS); \
	fi
	@if ! command -v chromium >/dev/null; then \
		echo "installing chromium (the report pages' browser tests)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-liberation; \
	fi
	$(GO) mod download
	@if [ ! -f $(CACHE)/npm/node_modules/canonicalize/package.json ]; then \
		npm install --silent --no-audit --no-fund --prefix $(CACHE)/npm canonicalize@2.0.0; \
	fi
	@touch $@

build: deps
	$(GO) build -o $(BIN) ./cmd/ceres-export

vet: deps
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

test: deps vet
	CERES_NPM_DIR=$(abspath $(CACHE)/npm) $(GO) test -count=1 -timeout 40m ./...

# demo: the main job on the embedded default (the contract's example
# specification): synthesise a session with two cameras, export it to a
# LeRobot shard, verify the shard against its journal.
demo: build
	rm -rf $(DEMO_DIR)
	$(BIN) spec check taskspec/testdata/example.json
	$(BIN) synth -o $(DEMO_DIR)/session --seed 1 --cameras 2
	$(BIN) journal inspect $(DEMO_DIR)/session
	$(BIN) export $(DEMO_DIR)/session -o $(DEMO_DIR)/shard --profile profiles/synth.yaml
	$(BIN) verify $(DEMO_DIR)/shard --journal $(DEMO_DIR)/session
	@echo "demo shard: $(abspath $(DEMO_DIR)/shard)"

# bench: every benchmark once; each reports its goal as a ratio against a
# reference measured in the same run (ratio_* metrics). -p 1 runs one
# package's benchmarks at a time: go test otherwise runs packages side by
# side, and each benchmark would measure its neighbours' load.
bench: deps
	@rm -f $(CACHE)/bench.failed
	{ $(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 90m ./... || touch $(CACHE)/bench.failed; } | tee $(CACHE)/bench.txt
	@echo "== ratios"; grep -E 'ratio|fraction' $(CACHE)/bench.txt || true
	@if [ -f $(CACHE)/bench.failed ]; then echo "bench: a benchmark failed" >&2; exit 1; fi

# fuzz runs every fuzz target for FUZZTIME each.
FUZZTIME ?= 30s
fuzz: deps
	@for pkg in $$($(GO) list ./...); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

conformance: build
	bash tests/conformance/run.sh

clean:
	rm -rf bin $(CACHE)
