# iolens build and test entry points. See README.md.
# scripts/install-deps puts Go in /usr/local/go when none is installed.
export PATH := $(PATH):/usr/local/go/bin
GO      ?= go
BIN     := bin/iolens
# VERSION: the tag (v0.2.0, or v0.2.0-3-gabc1234 past it); untagged
# commits are v0.0.0-g<commit>. Evaluated once.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.0.0-g$$(git describe --always --dirty 2>/dev/null || echo unknown))
endif
ifeq ($(origin COMMIT),undefined)
COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
endif
LDFLAGS := -s -w -X github.com/iolens/iolens/internal/buildinfo.Version=$(VERSION) -X github.com/iolens/iolens/internal/buildinfo.Commit=$(COMMIT)
SCRATCH ?= ./iolens-scratch
# Debian packages: what 'make run' needs, and what the tests need on top
# (file systems for the emulator, chromium for the HTML report tests in a
# real browser, etcd-server for iolens etcd's tests against a real etcd,
# promtool from prometheus for the alert unit tests and the exporters'
# lint, Prometheus and its node exporter for 'analyze --prometheus', a
# Pushgateway for 'k8s run --push'; the tests start their own on
# loopback ports. On a systemd host these packages may also enable their
# services: 'systemctl disable --now prometheus prometheus-node-exporter
# prometheus-pushgateway etcd' if you do not want them).
RUN_PKGS  := fio
TEST_PKGS := $(RUN_PKGS) e2fsprogs xfsprogs util-linux chromium chromium-driver etcd-server prometheus prometheus-node-exporter prometheus-pushgateway
APT_PKGS  := $(TEST_PKGS)

.PHONY: all build deps run test test-unit test-short fuzz bench clean image e2e \
	dist release-check image-debs install uninstall clean-dist

# fuzz: every fuzz target of the module (scripts/fuzz finds them) for
# FUZZTIME each; make test runs each for FUZZTIME_TEST.
FUZZTIME      ?= 3m
FUZZTIME_TEST ?= 2s

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/iolens

# deps installs what the tests need and is missing, via apt, when running
# as root.
deps:
	@scripts/install-deps $(APT_PKGS)

# run: iolens diagnose (the answer in three minutes) on a scratch directory
# under the current directory
# (installs fio, and Go when absent; nothing the tests alone need).
run:
	@scripts/install-deps $(RUN_PKGS)
	@$(MAKE) --no-print-directory build
	./$(BIN) diagnose --create $(SCRATCH)

# test: every test: the unit tests of every package first (they fail
# fast), then, in full, the packages whose tests -short cut short
# (scripts/long-packages: real IO on emulated disks, loop devices and
# cgroups, a browser; they skip, saying why, where those are not
# available), in two passes. The exclusive pass runs the packages with a
# real-IO test that measures the machine (realio.Exclusive), one at a
# time (-p 1), nothing else running, and skips their shared tests: beside
# such a test even another package's build moves the machine's iowait,
# which watch and analyze --prometheus read. Then scripts/test-tail runs
# the shared pass (the tests whose figures an emulated disk's caps set, in
# RAM, two at a time (realio.Shared), and the long packages with no real
# IO of that kind: browsers, builds) and the fuzz targets (one per CPU,
# FUZZ_JOBS), and, as root, beside them the Kubernetes end-to-end test on
# a real cluster of two nodes (make e2e; IOLENS_E2E=0 leaves it out).
test: deps
	$(GO) vet ./...
	$(MAKE) test-unit
	promtool test rules deploy/watch-prometheusrule-test.yaml
	IOLENS_REALIO_PASS=exclusive $(GO) test -count=1 -p 1 -timeout 30m $$(GO=$(GO) scripts/long-packages --exclusive)
	GO=$(GO) scripts/test-tail $(FUZZTIME_TEST)

# test-unit: the tests that need no root, no real IO and no cluster
# (-short skips the others, saying why); under a minute.
test-unit:
	$(GO) test -short -count=1 -timeout 5m ./...

test-short: test-unit

fuzz:
	GO=$(GO) scripts/fuzz $(FUZZTIME)

# image: the k8s agent image for this machine's architecture as a
# docker-archive tarball (for 'ctr images import'; the e2e loads it),
# built without a container daemon from bin/iolens and the Debian packages
# pinned in internal/image/debs.lock (downloaded once into
# ~/.cache/iolens/debs, or $$IOLENS_CACHE/debs, and checked by SHA-256).
# Tagged with the version, never latest.
IMAGE_TAR := bin/iolens-image.tar
image: build
	$(GO) run ./cmd/iolens-image --iolens $(BIN) --version $(VERSION) --out $(IMAGE_TAR)

# image-debs: only download the pinned packages of every architecture
# (the image tests use them when present, and skip saying so otherwise).
image-debs:
	$(GO) run ./cmd/iolens-image --arch $(subst $(space),$(comma),$(DIST_ARCHES)) --fetch-only

# e2e: a real Kubernetes cluster of two nodes (root only; see test/e2e/):
# cluster up, the k8s tests, cluster down (also on failure), host check.
e2e: image
	test/e2e/run.sh $(BIN) $(IMAGE_TAR)

bench: build
	go run ./benchmarks/overhead -iolens $(BIN)

clean:
	rm -rf bin

# Release. dist: static binaries for every architecture in DIST_ARCHES,
# their archives, the agent image as one OCI layout (an index of every
# architecture), the krew manifest, an SPDX SBOM and SHA256SUMS, in
# $(DIST)/. A release job uploads $(DIST)/*.tar.gz, *.json, iolens.yaml and
# SHA256SUMS, and copies $(DIST)/oci to the registry. RELEASE_URL is where
# the archives will be downloaded from (the krew manifest points there).
DIST        ?= dist
DIST_ARCHES ?= amd64 arm64
RELEASE_URL ?= https://github.com/iolens/iolens/releases/download/$(VERSION)
comma := ,
space := $(subst ,, )
dist: clean-dist
	@for a in $(DIST_ARCHES); do \
		echo "build linux/$$a"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
			-o $(DIST)/build/linux_$$a/ ./cmd/iolens ./cmd/kubectl-iolens || exit 1; \
	done
	$(GO) run ./cmd/iolens-image --arch $(subst $(space),$(comma),$(DIST_ARCHES)) --version $(VERSION) \
		--iolens '$(DIST)/build/linux_{arch}/iolens' --oci $(DIST)/oci --manifest $(DIST)/build/image.json
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) $(GO) run ./cmd/iolens-release dist \
		--dir $(DIST) --version $(VERSION) --arch $(subst $(space),$(comma),$(DIST_ARCHES)) \
		--url $(RELEASE_URL) --image $(DIST)/build/image.json

# release-check: what a user and a registry would check of $(DIST): the
# checksums and the krew hashes (by a shell script with sha256sum, apart
# from the Go code that wrote them), the archives' contents, this
# machine's binaries run 'iolens version', the OCI layout has every
# platform with the same iolens, and (as root) the image's iolens finds
# its fio in a chroot.
release-check:
	test/release/check.sh $(DIST)
	$(GO) run ./cmd/iolens-release check --dir $(DIST) --arch $(subst $(space),$(comma),$(DIST_ARCHES))

clean-dist:
	rm -rf $(DIST)

# install: iolens and kubectl-iolens into $(DESTDIR)$(PREFIX)/bin, with
# bash and zsh completion.
PREFIX ?= /usr/local
install: build
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/kubectl-iolens ./cmd/kubectl-iolens
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 0755 $(BIN) bin/kubectl-iolens $(DESTDIR)$(PREFIX)/bin/
	./$(BIN) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/iolens
	./$(BIN) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_iolens

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/iolens $(DESTDIR)$(PREFIX)/bin/kubectl-iolens \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/iolens \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_iolens
