# The iolens agent image for 'iolens k8s run', for users with a registry:
#
#   docker build -t registry.example.com/iolens:$(git describe --tags) .
#   iolens k8s run --image registry.example.com/iolens:<that tag> ...
#
# 'make image' builds an equivalent image without a daemon (host fio plus
# a static busybox) as a tarball for 'ctr images import'.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/iolens/iolens/internal/cli.Version=${VERSION}" \
    -o /out/iolens ./cmd/iolens

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends fio \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd -g 65532 iolens && useradd -u 65532 -g 65532 -d /tmp -s /bin/sh iolens \
 && mkdir -p /data /host
COPY --from=build /out/iolens /usr/local/bin/iolens
# The pod spec sets the user (non-root by default; root only for Block mode
# and node-check); this is the default for other uses.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/iolens"]
