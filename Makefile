# ceres-export: on a fresh Debian 12 machine `make demo` and `make test` do all
# the set-up themselves (every target depends on deps).

GO        ?= go
BIN       := bin/ceres-export
CACHE     := .cache
DEMO_DIR  := $(CACHE)/demo
# The build tools of the pinned libraries, the ffmpeg CLI (the benchmarks'
# reference and an independent decoder in tests) and GNU time.
APT_PKGS  := pkg-config ffmpeg time nasm meson ninja-build cmake dpkg-dev xz-utils

# Every build links the same C libraries, development and release alike:
# FFmpeg 7.1 with SVT-AV1, x264, libvpx and dav1d, built statically from
# pinned Debian source packages (release/libs.lock) once per pin, into
# CERES_CACHE outside the clone (docs/release.md). WITH_LIBS points a go
# command at them; `make env` prints it for a shell. CGO_CFLAGS names the
# prefix because Go's build cache keys cgo packages by it, not by what
# pkg-config answers: without it a new pin would link the old libraries.
CERES_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ceres-export
export CERES_CACHE
LIBS_ARCH := $(shell $(GO) env GOARCH)
LIBS      := $(CACHE)/libs-$(LIBS_ARCH).prefix
WITH_LIBS  = PKG_CONFIG_PATH="$$(cat $(LIBS))/lib/pkgconfig" CGO_CFLAGS="-O2 -g -I$$(cat $(LIBS))/include"

.PHONY: all deps libs env build check lint test demo bench bench-goals conformance fuzz vet clean \
        release release-deps release-check image wheel

all: build

# deps installs what a fresh machine lacks: the libraries' build tools and
# the ffmpeg CLI, chromium and fonts-liberation (the session and campaign
# pages' browser tests), Go modules, the RFC 8785 npm package the
# canonicalisation cross-check runs under node; then the pinned libraries.
deps: $(CACHE)/deps.stamp libs

$(CACHE)/deps.stamp: go.mod go.sum Makefile
	@mkdir -p $(CACHE)
	@if ! command -v ffmpeg >/dev/null || [ ! -x /usr/bin/time ] || ! dpkg-query -W -f='$${Status}\n' $(APT_PKGS) 2>/dev/null | awk '/ok installed/ { n++ } END { exit n != $(words $(APT_PKGS)) }'; then \
		echo "installing the libraries' build tools and the ffmpeg CLI"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PKGS); \
	fi
	@if ! command -v chromium >/dev/null; then \
		echo "installing chromium (the pages' browser tests)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-liberation; \
	fi
	$(GO) mod download
	@if [ ! -f $(CACHE)/npm/node_modules/canonicalize/package.json ]; then \
		npm install --silent --no-audit --no-fund --prefix $(CACHE)/npm canonicalize@2.0.0; \
	fi
	@touch $@

# libs builds the pinned libraries for this machine's architecture, or
# finds them built (well under a second), and records their prefix.
libs: $(CACHE)/deps.stamp
	@bash release/libs.sh $(LIBS_ARCH) > $(CACHE)/libs-$(LIBS_ARCH).log || { tail -n 30 $(CACHE)/libs-$(LIBS_ARCH).log; exit 1; }
	@tail -n 1 $(CACHE)/libs-$(LIBS_ARCH).log > $(LIBS)

# env prints the environment a go command outside make needs:
# eval "$$(make -s env)", then go build, go test as usual.
env: libs
	@echo "export PKG_CONFIG_PATH=$$(cat $(LIBS))/lib/pkgconfig CGO_CFLAGS='-O2 -g -I$$(cat $(LIBS))/include'"

build: deps
	$(WITH_LIBS) $(GO) build -o $(BIN) ./cmd/ceres-export

vet: deps
	$(WITH_LIBS) $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

test: deps vet
	$(WITH_LIBS) CERES_NPM_DIR=$(abspath $(CACHE)/npm) $(GO) test -count=1 -timeout 40m ./...

# lint: staticcheck and deadcode -test over the whole module, at pinned
# versions that go install puts in $(CERES_CACHE)/tools once per machine,
# outside the clone like the libraries (each binary's name carries its
# version, so a new pin installs anew): a fresh clone's make check does
# not build staticcheck again. Both load every
# package, the cgo ones included, so lint needs the pinned libraries;
# check runs staticcheck on the pure packages only, and deadcode, which
# must see the whole program, runs here and in CI (.ci/run). deadcode
# prints each function no main and no test reaches; any line fails.
STATICCHECK_VERSION := v0.8.2
DEADCODE_VERSION    := v0.53.0
TOOLS       := $(CERES_CACHE)/tools
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
DEADCODE    := $(TOOLS)/deadcode-$(DEADCODE_VERSION)

$(STATICCHECK):
	@mkdir -p $(TOOLS)
	GOBIN=$(abspath $(TOOLS)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@mv $(TOOLS)/staticcheck $@

$(DEADCODE):
	@mkdir -p $(TOOLS)
	GOBIN=$(abspath $(TOOLS)) $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)
	@mv $(TOOLS)/deadcode $@

lint: deps $(STATICCHECK) $(DEADCODE)
	$(WITH_LIBS) $(STATICCHECK) ./...
	@out=$$($(WITH_LIBS) $(DEADCODE) -test ./...) || exit 1; \
		test -z "$$out" || { echo "deadcode: unreachable from every main and test:"; echo "$$out"; exit 1; }

# check: the fast lane, for every edit: gofmt, and vet, staticcheck and
# -short tests of the pure packages, those that neither they nor their
# tests reach FFmpeg through (go-astiav), built with CGO_ENABLED=0, so that
# it needs no FFmpeg, browser or cluster (internal/testenv skips what needs
# one in -short mode). make test stays the whole suite, and what CI runs.
# A test file that needs FFmpeg in a package whose code does not (verify,
# merge: video behind their interfaces) builds only with cgo (//go:build
# cgo), so the pure packages are found with CGO_ENABLED=0 as well.
# go test's own vet is off: go vet ran every analyzer over the same
# packages and their tests just before.
# PURE_PKGS comes from one go list of every package and its test variants
# (a package, its internal and external tests, its test main; the main's
# Deps are the whole test binary's), computed on first use and then kept:
# a := here would run go list for every make target, make env included.
PURE_PKGS = $(eval PURE_PKGS := $(shell CGO_ENABLED=0 $(GO) list -test -f '{{or .ForTest .ImportPath}} {{join .Deps " "}}' ./... | \
	awk '{ p = $$1; sub(/\.test$$/, "", p); all[p] = 1; for (i = 2; i <= NF; i++) if ($$i == "github.com/asticode/go-astiav") cgo[p] = 1 } \
	END { for (p in all) if (!(p in cgo)) print p }' | sort))$(PURE_PKGS)
check: $(STATICCHECK)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	CGO_ENABLED=0 $(GO) vet $(PURE_PKGS)
	CGO_ENABLED=0 $(STATICCHECK) $(PURE_PKGS)
	CGO_ENABLED=0 $(GO) test -short -count=1 -vet=off $(PURE_PKGS)

# release writes what a release publishes into dist/: for each of
# RELEASE_ARCHES the fully static binary, gzipped, its third-party notices
# and its pip wheel, with SHA256SUMS (release/dist.sh, docs/release.md);
# image adds each architecture's OCI image archive. release-check runs them
# where users do: bare Debian 11 and 13 chroots (arm64 under qemu), the
# wheel in a fresh venv, the image in podman, every output compared byte for
# byte with the development build's (tests/release/run.sh), and the
# statistics' float bits on arm64 under qemu equal amd64's (a multiply-add
# the arm64 compiler fuses changes the last digit). CI checks amd64; run
# release-check before a change to the build lands.
DIST           := dist
RELEASE_ARCHES ?= amd64 arm64
RELEASE_PKGS   := debootstrap qemu-user-static podman buildah runc zstd binutils \
                  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu

release-deps: deps
	@if ! dpkg-query -W -f='$${Status}\n' $(RELEASE_PKGS) 2>/dev/null | awk '/ok installed/ { n++ } END { exit n != $(words $(RELEASE_PKGS)) }'; then \
		echo "installing the release's build and test tools"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(RELEASE_PKGS); \
	fi

release: release-deps
	bash release/dist.sh --out $(DIST) $(RELEASE_ARCHES)

image: release-deps
	bash release/dist.sh --image --out $(DIST) $(RELEASE_ARCHES)

release-check: image build
	cd $(DIST) && sha256sum --strict -c SHA256SUMS
	GOARCH=arm64 CGO_ENABLED=0 $(GO) test -count=1 -exec qemu-aarch64-static -run TestStatsSameBitsOnEveryArch ./internal/shard
	@set -e; for a in $(RELEASE_ARCHES); do \
		wheel=$$(ls $(DIST)/ceres_export-*_$$( [ $$a = amd64 ] && echo x86_64 || echo aarch64 ).whl); \
		bash tests/release/run.sh $(DIST)/ceres-export-linux-$$a $(BIN) --arch $$a --wheel "$$wheel" \
			--notices $(DIST)/THIRD_PARTY_NOTICES-linux-$$a --image $(DIST)/ceres-export-image-linux-$$a.tar; \
	done
	CERES_EXPORT=$(DIST)/ceres-export-linux-$(firstword $(RELEASE_ARCHES)) bash tests/release/notices_test.sh
	bash tests/release/source_test.sh $(DIST)/ceres-export-*-source.tar.gz $(BIN)

# demo: the main job on the embedded default (the contract's example
# specification): synthesise a session with two cameras, export it to a
# LeRobot shard, verify the shard against its journal; then follow a
# session recorded live and show its shard is the batch export's.
demo: build
	rm -rf $(DEMO_DIR)
	$(BIN) spec check taskspec/testdata/example.json
	$(BIN) synth -o $(DEMO_DIR)/session --seed 1 --cameras 2 --motion arm
	$(BIN) journal inspect $(DEMO_DIR)/session
	$(BIN) export $(DEMO_DIR)/session -o $(DEMO_DIR)/shard --profile profiles/synth-arm.yaml
	$(BIN) verify $(DEMO_DIR)/shard --journal $(DEMO_DIR)/session
	@echo "demo shard: $(abspath $(DEMO_DIR)/shard)"
	@echo "follow: a session recorded live at 4x real time, exported while it records"
	$(BIN) synth -o $(DEMO_DIR)/live --seed 2 --cameras 2 --time-scale 0.3 --live --speed 4 > $(DEMO_DIR)/live.log & \
	$(BIN) export $(DEMO_DIR)/live -o $(DEMO_DIR)/followed --follow --progress-every 2s; status=$$?; wait $$! && [ $$status -eq 0 ]
	$(BIN) export $(DEMO_DIR)/live -o $(DEMO_DIR)/batch -q > /dev/null
	diff -r $(DEMO_DIR)/followed $(DEMO_DIR)/batch
	@echo "followed shard $(abspath $(DEMO_DIR)/followed) = the batch export's, byte for byte"

# bench: every benchmark once (BENCH=regexp for some); each reports its goal
# as a ratio against a reference measured in the same run (ratio_* metrics). -p 1 runs one
# package's benchmarks at a time: go test otherwise runs packages side by
# side, and each benchmark would measure its neighbours' load.
#
# BENCH_GOALS are the performance goals (docs/benchmarks.md), metric then
# bound: what a user waits for, against a reference of the same run. The
# video stage against the ffmpeg command line doing the same job (both
# encoders); its CPU time against decode-only plus encode-only CPU of the
# same frames; a whole export against its video stage alone; a one-hour
# session's peak memory, less FFmpeg's mp4 muxer index, against a
# one-minute one's; a text-only re-export against a full export; a merge
# against a copy of the same bytes as durable as its output (cp -r + sync)
# and against LeRobot's aggregate_datasets; a campaign against the sum of
# its sessions' single exports, and a skipped task against its export;
# at scale, a merge of 256 shards against one of 8 (time per shard, peak
# memory), an append to the 256-shard dataset against a merge of two, at 1,000
# shards the peak memory against the merge of 8 and an append against a merge
# of two, and batch plan and status of 100,000 tasks against 1,000 (time
# and memory per task); a followed session's END to commit against a batch
# export of it. bench checks every reported goal metric and fails when one misses or a
# goal metric is not reported at all; a goal written ?metric is checked
# only where it is reported (aggregate_datasets needs the conformance venv).
BENCH_GOALS := ratio_vs_ffmpeg_cli>=1.0 ratio_cpu_vs_decode_plus_encode<=1.05 \
               ratio_export_vs_its_video_stage<=1.05 ratio_peak_mem_1h_less_mux_index_vs_1min<=1.05 \
               fraction_reexport_vs_full<=0.05 ratio_merge_vs_cp_sync<=2 ?ratio_aggregate_vs_merge>=5 \
               ratio_campaign_vs_exports<=1.05 fraction_skip_vs_export<=0.01 \
               ratio_merge_per_shard_256_vs_8<=1.25 ratio_peak_mem_merge_256_vs_8<=1.5 \
               ratio_merge_into_256_vs_merge_2<=2 \
               ratio_peak_mem_merge_1000_vs_8<=1.5 ratio_merge_into_1000_vs_merge_2<=2 \
               ratio_plan_time_per_task_100k_vs_1k<=1.25 ratio_plan_mem_per_task_100k_vs_1k<=1.25 \
               ratio_status_time_per_task_100k_vs_1k<=1.25 ratio_status_mem_per_task_100k_vs_1k<=1.25 \
               fraction_follow_end_to_commit_vs_batch<=0.05
BENCH     ?= .
bench: deps
	@rm -f $(CACHE)/bench.failed
	{ $(WITH_LIBS) $(GO) test -p 1 -run '^$$' -bench '$(BENCH)' -benchtime 1x -timeout 90m ./... || touch $(CACHE)/bench.failed; } | tee $(CACHE)/bench.txt
	@echo "== ratios"; grep -E 'ratio|fraction' $(CACHE)/bench.txt || true
	@$(MAKE) --no-print-directory bench-goals || touch $(CACHE)/bench.failed
	@if [ -f $(CACHE)/bench.failed ]; then echo "bench: a benchmark failed or missed its goal" >&2; exit 1; fi

# bench-goals checks $(CACHE)/bench.txt against BENCH_GOALS.
bench-goals:
	@echo "== goals"; awk -v goals='$(BENCH_GOALS)' -v all='$(filter .,$(BENCH))' ' \
		BEGIN { n = split(goals, g, " "); for (i = 1; i <= n; i++) { if (sub(/^\?/, "", g[i])) opt[i] = 1; match(g[i], /[<>]=/); \
			name[i] = substr(g[i], 1, RSTART - 1); op[i] = substr(g[i], RSTART, 2); bound[i] = substr(g[i], RSTART + 2) + 0 } } \
		/^Benchmark/ { for (f = 2; f < NF; f++) for (i = 1; i <= n; i++) if ($$(f + 1) == name[i]) { \
			v = $$f + 0; ok = (op[i] == ">=") ? v >= bound[i] : v <= bound[i]; seen[i]++; \
			printf "%-4s %-44s %-34s %8.3f %s %s\n", ok ? "met" : "MISS", $$1, name[i], v, op[i], bound[i]; if (!ok) bad++ } } \
		END { if (all != "") for (i = 1; i <= n; i++) if (!seen[i] && opt[i]) printf "skip %s: not reported (optional)\n", name[i]; \
			else if (!seen[i]) { printf "MISS %s: not reported\n", name[i]; bad++ } \
			exit bad > 0 }' $(CACHE)/bench.txt

# fuzz runs every fuzz target for FUZZTIME each. Go minimises every new
# interesting input for up to 60 s by default; on a segment-sized input that
# is most of a minute with no new executions, so the minimising budget is
# kept short (docs/reliability.md has the figures).
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 2s
fuzz: deps
	@for pkg in $$($(GO) list ./...); do \
		for t in $$($(WITH_LIBS) $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; $(WITH_LIBS) $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg || exit 1; \
		done; \
	done

conformance: build
	bash tests/conformance/run.sh

clean:
	rm -rf bin $(CACHE) $(DIST)
