# SPDX-License-Identifier: Apache-2.0
# wirespeed - see README.md. `make help` lists the targets, one line each:
# the "## TARGET: what it does" line above each target.

GO       ?= go
# MAJOR.MINOR.PATCH[+gitN.HASH] from the vMAJOR.MINOR.PATCH tags (CHANGELOG.md)
VERSION  ?= $(shell scripts/version.sh 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/wirespeed/wirespeed/internal/cli.Version=$(VERSION)
# Packages are installed with --no-install-recommends: with recommends on,
# wireguard-tools pulls wireguard-modules, which apt satisfies with a kernel
# image (a new boot kernel), and QEMU drags in a GUI stack.
# scripts/check-setup-packages.sh (run by make check) fails if these would
# install any linux-image package on an empty machine.
# SETUP_PKGS: what make run needs - bench and the host lab (iperf3, ethtool,
# iproute2, iputils-ping), observe (bpftool), the build (git,
# ca-certificates: go fetching modules).
# TEST_PKGS: what the tests add - report's browser and flent tests
# (chromium, flent, python3-matplotlib), the exporter's integration test
# (prometheus: the real server scrapes it), make lint's shellcheck (its
# staticcheck comes through go run, see scripts/lint.sh).
# docs/packaging.md has the sizes.
SETUP_PKGS := iperf3 ethtool iproute2 iputils-ping bpftool git ca-certificates
TEST_PKGS := chromium flent python3-matplotlib prometheus shellcheck
# LAB_PKGS: the VM lab (qemu..wireguard-tools; qemu-system-arm for its arm64
# guests; gcc-12 and make build its broken test module), make check's arm64
# binary run (qemu-user-static: qemu-aarch64-static, called directly, no
# binfmt_misc needed; the arm64 lab lists the guest busybox's applets with
# it), kernel/usbnet's module build (patch, dwarves; gcc-aarch64-linux-gnu
# cross-builds it for Debian's arm64 kernels, whose headers use
# aarch64-linux-gnu-gcc-12), make bpf and bpf-check (clang, llvm,
# libbpf-dev; CI's make check runs bpf-check with them) and make
# observe-overhead (bpftrace); debootstrap makes the Debian 13 root in which
# net-next/check.sh builds for the 7.x kernels. The VM lab's guest kernel is fetched with
# apt-get download, never installed.
LAB_PKGS := qemu-system-x86 qemu-system-arm busybox-static kmod xz-utils cpio wireguard-tools gcc-12 make patch dwarves \
	qemu-user-static gcc-aarch64-linux-gnu clang llvm libbpf-dev bpftrace debootstrap
APT_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends
# The oldest Go that builds this tree (go.mod's go line).
GO_MIN := $(shell sed -n 's/^go \([0-9.]*\).*/\1/p' go.mod)
# Tests run one package at a time: the root integration tests build network
# namespaces and load eBPF programs, and their traffic should not compete.
TESTFLAGS ?= -count=1 -p 1 -timeout 30m

export CGO_ENABLED = 0
# clang's flags for the eBPF objects: internal/observe/gen.go's go:generate
# lines read them (make bpf, make bpf-check; observe32 adds -DOBSERVE_PTR32).
# The two -I paths find asm/types.h on Debian amd64 and arm64 hosts; a
# missing one is ignored.
export BPF_CFLAGS := -O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu

.PHONY: help golden all setup setup-test setup-lab deb deb-test run build test check lint bpf-check fuzz cross cross-check bpf clean observe-overhead go-version check-setup-packages experiments-check experiments-update experiments-archive promtool-check self-bench

## all: the same as make build
all: build

## help: this list
help:
	@awk '/^## [a-z-]+: / { sub(/^## /, ""); n = index($$0, ":"); printf "  %-22s %s\n", substr($$0, 1, n - 1), substr($$0, n + 2) }' $(firstword $(MAKEFILE_LIST))

## setup: install what make run needs on a fresh Debian machine (never a kernel, no recommends), then build
setup:
	@if [ "$$(id -u)" != 0 ]; then echo "make setup installs packages: run it as root" >&2; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	$(APT_INSTALL) $(SETUP_PKGS)
	$(MAKE) build

## setup-test: add what the tests need (make check; .ci/run calls it)
setup-test:
	@if [ "$$(id -u)" != 0 ]; then echo "make setup-test installs packages: run it as root" >&2; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	$(APT_INSTALL) $(TEST_PKGS)

## setup-lab: add what the VM lab, the module build and make bpf need
setup-lab:
	@if [ "$$(id -u)" != 0 ]; then echo "make setup-lab installs packages: run it as root" >&2; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	$(APT_INSTALL) $(LAB_PKGS)

# Say what to do when Go is missing or older than go.mod asks, before
# building (Debian 12's golang-go is 1.19). Go 1.21+ fetches a newer
# toolchain itself unless GOTOOLCHAIN=local, and then passes.
## go-version: say what to do when Go is missing or older than go.mod asks
go-version:
	@if ! command -v $(GO) >/dev/null; then \
		echo "no Go found ($(GO)): wirespeed needs Go $(GO_MIN) or newer (go.mod). $(GO_HOWTO)" >&2; exit 1; fi; \
	v=$$($(GO) env GOVERSION 2>&1) || { echo "$$v" >&2; echo "$(GO) could not run (above): wirespeed needs Go $(GO_MIN) or newer. $(GO_HOWTO)" >&2; exit 1; }; \
	v=$${v#go}; v=$${v%%[!0-9.]*}; \
	if [ "$$(printf '%s\n%s\n' "$(GO_MIN)" "$$v" | sort -V | head -1)" != "$(GO_MIN)" ]; then \
		echo "Go $$v is too old: wirespeed needs Go $(GO_MIN) or newer (go.mod; Debian 12's golang-go is 1.19). $(GO_HOWTO)" >&2; exit 1; fi

GO_HOWTO = Install it from https://go.dev/dl/ (tar -C /usr/local -xzf go$(basename $(GO_MIN)).N.linux-ARCH.tar.gz, then PATH=/usr/local/go/bin:\$$PATH), or, with a Go of 1.21 or newer, let go fetch it: GOTOOLCHAIN=go$(GO_MIN) make build. On a Raspberry Pi, a prebuilt binary from make cross (dist/wirespeed-linux-arm64) needs no Go at all.

# Fails if the setup's packages would install a kernel image (apt-get -s).
## check-setup-packages: fail if the setup packages would install a kernel image (apt-get -s)
check-setup-packages:
	scripts/check-setup-packages.sh $(SETUP_PKGS) $(TEST_PKGS) $(LAB_PKGS)

# RUN_REPEAT interleaved repetitions of the three variants: enough for the
# headline to decide GRO's throughput gain on a 2-CPU machine in about
# five minutes (docs/results.md, "make run's repetitions"). The headline ends
# the run; wirespeed show --all prints every metric, wirespeed report plots it.
RUN_REPEAT ?= 10
## run: the main job: inspect this host, then measure seed 1's three RX paths in the host lab
run: build
	./wirespeed inspect
	mkdir -p results
	./wirespeed bench --sender-offloads off --qdisc pfifo_fast -t 5s --repeat $(RUN_REPEAT) --out results/seed1.json \
		--variant 'nogro: --gro off' --variant 'gro: --gro on' --variant 'threaded: --gro on --threaded'
	./wirespeed report results/seed1.json -o results/seed1.html

## build: the static binary ./wirespeed (CGO off)
build: go-version
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o wirespeed ./cmd/wirespeed

# experiments/ is a module of its own: ./... stops at its go.mod
## test: unit tests, plus root integration tests when run as root
test:
	$(GO) test $(TESTFLAGS) ./...
	cd experiments && $(GO) test $(TESTFLAGS) ./...

## check: gofmt + go vet + lint + bpf-check + tests + every fuzz target for FUZZTIME (3s)
check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting" >&2; exit 1; }
	$(GO) vet ./...
	cd experiments && $(GO) vet ./...
	$(MAKE) lint
	$(MAKE) bpf-check
	GOARCH=arm64 $(GO) build -o /dev/null ./cmd/wirespeed
	$(MAKE) check-setup-packages
	$(MAKE) test
	$(MAKE) fuzz
	$(MAKE) cross-check
	$(MAKE) promtool-check
	@command -v qemu-system-x86_64 >/dev/null || echo "note: the VM lab's tests skipped (no QEMU): sudo make setup-lab installs what they need"

# staticcheck (pinned, through go run) and shellcheck; see scripts/lint.sh
## lint: staticcheck over the Go packages, shellcheck over every tracked shell script
lint:
	GO=$(GO) scripts/lint.sh

# every Go fuzz target, FUZZTIME each (scripts/fuzz.sh finds them)
FUZZTIME ?= 3s
## fuzz: only the fuzz targets (FUZZTIME=30s make fuzz for a longer run)
fuzz:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME)

## cross: static binaries for amd64 and arm64 into dist/
cross: go-version
	mkdir -p dist
	GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/wirespeed-linux-amd64 ./cmd/wirespeed
	GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/wirespeed-linux-arm64 ./cmd/wirespeed

# Debian packages of make cross's binaries and kernel/usbnet (docs/packaging.md).
## deb: Debian packages into dist/: wirespeed (amd64, arm64) and wirespeed-usbnet-dkms
deb: cross
	GO=$(GO) scripts/mkdeb.sh

# Installs, runs and removes them in a fresh Debian 12 root (root; mmdebstrap).
## deb-test: (root) install, run and remove the packages in a fresh Debian 12 root
deb-test:
	SETUP_PKGS="$(SETUP_PKGS)" TEST_PKGS="$(TEST_PKGS)" scripts/deb-test.sh

# No arm64 code runs anywhere else in make check: run make cross's arm64
# binary under qemu-user on every fixture in testdata/snapshots and compare
# its inspect/doctor --from output with the amd64 binary's, byte for byte.
# Without qemu-aarch64(-static) it notes the skip and passes.
## cross-check: the arm64 binary under qemu-user prints what the amd64 one prints on every fixture
cross-check: cross
	scripts/cross-fixtures.sh dist/wirespeed-linux-amd64 dist/wirespeed-linux-arm64

# The alert rules (contrib/prometheus): promtool's syntax check and the
# rules' unit tests; and the exporter's golden /metrics of every snapshot
# fixture (internal/exporter/testdata/golden) through promtool's metrics
# lint. promtool is in Debian's prometheus package; without it this notes
# the skip and passes.
## promtool-check: promtool checks the alert rules and their tests, and lints the golden /metrics
promtool-check:
	@if command -v promtool >/dev/null; then \
		promtool check rules contrib/prometheus/wirespeed.rules.yml && \
		promtool test rules contrib/prometheus/wirespeed.rules.test.yml && \
		for f in internal/exporter/testdata/golden/*.prom; do \
			promtool check metrics < $$f || { echo "promtool check metrics: $$f" >&2; exit 1; }; \
		done; \
	else echo "note: the alert rules' tests and the golden /metrics lint skipped (no promtool): apt-get install --no-install-recommends prometheus"; fi

# Every golden set from every snapshot fixture in testdata/snapshots (the
# tests list the directory): inspect's and doctor's output, text and JSON
# (internal/cli/testdata/golden, which internal/inspect's tests read too),
# and the exporter's /metrics (internal/exporter/testdata/golden). Review
# the diff before committing it.
## golden: rewrite every golden file (inspect, doctor, /metrics) from every snapshot fixture
golden:
	$(GO) test -count=1 -run '^TestGolden(Metrics)?$$' ./internal/cli ./internal/exporter -update

## experiments-check: recompute every table in docs/results.md and hold each experiment to experiments.go's rules
experiments-check:
	cd experiments && $(GO) test -count=1 ./...

## experiments-update: rewrite the tables in docs/results.md from the raw files
experiments-update:
	cd experiments && $(GO) test -count=1 ./all -update

## experiments-archive: make each new run directory under experiments/*/data/ one archive
experiments-archive:
	experiments/archive-run.sh

# the instruments' own cost and noise in one run (experiments/selfbench;
# root, ~11 min); BEFORE=old-binary measures an older exporter beside it;
# RATE, PROGRAMS, REPEAT, SECONDS_PER_RUN: see experiments/selfbench/README.md
## self-bench: what the instruments cost and how much bench wobbles (root, ~11 min)
self-bench: build
	experiments/selfbench/self-bench.sh

## bpf: regenerate the committed eBPF objects with Debian 12's clang (BPF_CFLAGS)
bpf:
	$(GO) generate ./internal/observe/...

# the committed objects against what make bpf builds from bpf/*.c: byte for
# byte with the clang that built them (Debian 12's), programs and maps with
# another; notes the skip without clang (fails under CI); scripts/bpf-check.sh
## bpf-check: the committed eBPF objects are what make bpf builds from bpf/*.c
bpf-check:
	GO=$(GO) scripts/bpf-check.sh

# the cost of observe against no tracing and bpftrace (docs/results.md)
## observe-overhead: the cost of observe against no tracing and bpftrace
observe-overhead: build
	experiments/observeoverhead/observe-overhead.sh 10 6

## clean: remove ./wirespeed and dist/
clean:
	rm -rf wirespeed dist
