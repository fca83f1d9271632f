# iolens build and test entry points. See README.md.
# scripts/install-deps puts Go in /usr/local/go when none is installed.
export PATH := $(PATH):/usr/local/go/bin
GO      ?= go
BIN     := bin/iolens
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/iolens/iolens/internal/cli.Version=$(VERSION)
SCRATCH ?= ./iolens-scratch
# Packages the test run needs on a Debian machine (chromium for the HTML
# report tests in a real browser).
APT_PKGS := fio e2fsprogs xfsprogs util-linux chromium chromium-driver

.PHONY: all build deps run test test-short bench clean image e2e

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/iolens

# deps installs what is missing, via apt, when running as root.
deps:
	@scripts/install-deps $(APT_PKGS)

# run: the quick suite on a scratch directory under the current directory.
run: deps build
	./$(BIN) run --suite quick $(SCRATCH)

# test: every test. Tests that need root, loop devices or cgroups skip,
# saying why, when those are not available. As root, it ends with the
# Kubernetes end-to-end test on a real single-node cluster (make e2e).
test: deps
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...
	@if [ "$$(id -u)" = 0 ] && [ "$${IOLENS_E2E:-1}" != 0 ]; then $(MAKE) e2e; \
	else echo "e2e: skipped (needs root; IOLENS_E2E=0 skips it)"; fi

test-short:
	$(GO) test -short ./...

# image: the k8s agent image (iolens + fio + busybox) as a docker-archive
# tarball, built without a container daemon; tagged with the version.
IMAGE_TAR := bin/iolens-image.tar
image: build
	@scripts/install-deps busybox-static fio
	CGO_ENABLED=0 $(GO) run ./image --iolens $(BIN) --out $(IMAGE_TAR)

# e2e: a real single-node Kubernetes cluster (root only; see test/e2e/):
# cluster up, the k8s tests, cluster down (also on failure), host check.
e2e: image
	test/e2e/run.sh $(BIN) $(IMAGE_TAR)

bench: build
	go run ./bench/overhead -iolens $(BIN)

clean:
	rm -rf bin
