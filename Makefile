# wirespeed - see README.md. Targets:
#   make setup   install what the project needs on a fresh Debian machine, then build
#   make run     the main job: inspect this host, then measure the three RX paths
#                of seed 1 (no NAPI/GRO, NAPI + GRO, threaded NAPI + GRO) in the host lab
#   make build   the static binary ./wirespeed (CGO off)
#   make test    unit tests, plus root integration tests when run as root
#   make check   gofmt + go vet + tests
#   make cross   static binaries for amd64 and arm64 into dist/
#   make bpf     regenerate the committed eBPF objects with Debian's clang

GO       ?= go
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/wirespeed/wirespeed/internal/cli.Version=$(VERSION)
# iperf3..bpftrace: bench, lab, observe; qemu..make: the VM lab (gcc-12 and make
# build its broken test module); patch..dwarves: kernel/usbnet's module build
APT_PKGS := iperf3 ethtool iproute2 iputils-ping clang llvm libbpf-dev bpftool bpftrace git ca-certificates \
	qemu-system-x86 busybox-static kmod xz-utils cpio wireguard-tools gcc-12 make patch dwarves
# prometheus: the exporter's integration test scrapes with the real server
# (without its recommends: node-exporter and friends are not needed)
APT_PKGS_NORECS := prometheus
# Tests run one package at a time: the root integration tests build network
# namespaces and load eBPF programs, and their traffic should not compete.
TESTFLAGS ?= -count=1 -p 1 -timeout 30m

export CGO_ENABLED = 0

.PHONY: all setup run build test check cross bpf clean observe-overhead

all: build

setup:
	@if [ "$$(id -u)" != 0 ]; then echo "make setup installs packages: run it as root" >&2; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PKGS)
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(APT_PKGS_NORECS)
	@command -v $(GO) >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q golang-go
	$(MAKE) build

run: build
	./wirespeed inspect
	./wirespeed bench --sender-offloads off --qdisc pfifo_fast -t 5s --repeat 2 --out results/seed1.json \
		--variant 'nogro: --gro off' --variant 'gro: --gro on' --variant 'threaded: --gro on --threaded'
	./wirespeed compare results/seed1.json

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o wirespeed ./cmd/wirespeed

test:
	$(GO) test $(TESTFLAGS) ./...

check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting" >&2; exit 1; }
	$(GO) vet ./...
	GOARCH=arm64 $(GO) build -o /dev/null ./cmd/wirespeed
	$(MAKE) test

cross:
	mkdir -p dist
	GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/wirespeed-linux-amd64 ./cmd/wirespeed
	GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/wirespeed-linux-arm64 ./cmd/wirespeed

bpf:
	$(GO) generate ./internal/observe/...

# the cost of observe against no tracing and bpftrace (docs/results.md)
observe-overhead: build
	scripts/observe-overhead.sh 10 6

clean:
	rm -rf wirespeed dist
