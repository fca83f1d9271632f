// Command iolens-image builds the iolens agent image without a container
// daemon, from a static iolens binary and pinned Debian packages (fio with
// the libraries it loads, busybox-static; see internal/image/debs.lock).
//
//	# 'make image': the host's architecture, as a docker-archive for
//	# 'ctr images import' (the e2e tests load it this way)
//	go run ./cmd/iolens-image --iolens bin/iolens --out bin/iolens-image.tar
//
//	# 'make dist': both architectures as one OCI image layout (an index)
//	go run ./cmd/iolens-image --arch amd64,arm64 --version v0.2.0 \
//	    --iolens 'dist/build/linux_{arch}/iolens' --oci dist/oci --manifest dist/image.json
//
// Packages are downloaded once into the cache (--cache, default
// $IOLENS_CACHE/debs or ~/.cache/iolens/debs) and checked against their
// pinned SHA-256 before use; --offline refuses to download.
//
// Without --ref, the reference is the one iolens uses by default
// (ghcr.io/iolens/iolens:<version>), so 'iolens k8s run' finds the image
// once it is loaded into the node's container runtime or pushed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/image"
)

type options struct {
	arches               []string
	iolens, version, ref string
	out, oci, manifest   string
	mirror, cache, pause string
	offline, fetchOnly   bool
	httpTimeout          time.Duration
}

func main() {
	var o options
	arch := flag.String("arch", runtime.GOARCH, "architectures, comma-separated (amd64, arm64)")
	flag.StringVar(&o.iolens, "iolens", "bin/iolens", "static iolens binary; {arch} is replaced by each architecture")
	flag.StringVar(&o.version, "version", "", "iolens version, for the tag and labels (default: ask --iolens, when it runs here)")
	flag.StringVar(&o.ref, "ref", "", "image reference with a pinned tag (default: "+image.Repository+":<version>)")
	flag.StringVar(&o.out, "out", "", "write a docker-archive tarball (one architecture)")
	flag.StringVar(&o.oci, "oci", "", "write an OCI image layout with an index of every architecture into this new directory")
	flag.StringVar(&o.manifest, "manifest", "", "write what was built (reference, digests, packages) as JSON to this file")
	flag.StringVar(&o.mirror, "mirror", image.DefaultMirror, "Debian mirror")
	flag.StringVar(&o.cache, "cache", "", "package cache directory (default $IOLENS_CACHE/debs or ~/.cache/iolens/debs)")
	flag.BoolVar(&o.offline, "offline", false, "use only packages already in the cache")
	flag.BoolVar(&o.fetchOnly, "fetch-only", false, "download the pinned packages into the cache and stop")
	flag.StringVar(&o.pause, "pause", "", "build a pause image from this static binary instead (needs --ref)")
	flag.DurationVar(&o.httpTimeout, "http-timeout", 5*time.Minute, "timeout of each package download")
	flag.Parse()
	o.arches = strings.Split(*arch, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "iolens-image:", err)
		if h := hint.Of(err); h != "" {
			fmt.Fprintln(os.Stderr, "hint:", h)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.pause != "" {
		if o.ref == "" || o.out == "" {
			return errors.New("--pause needs --ref and --out")
		}
		b, err := image.Build(ctx, image.Spec{Arch: runtime.GOARCH, Files: []image.File{{Src: o.pause, Dst: "/pause"}}, Entrypoint: []string{"/pause"}})
		if err != nil {
			return err
		}
		return image.WriteDockerArchive(b.Image, o.ref, o.out)
	}
	cache := o.cache
	if cache == "" {
		var err error
		if cache, err = image.CacheDir(); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: o.httpTimeout}
	debsFor := func(arch string) ([]image.Deb, error) {
		if o.offline {
			return image.CachedDebs(cache, arch)
		}
		return image.FetchDebs(ctx, client, o.mirror, cache, arch)
	}
	if o.fetchOnly {
		for _, a := range o.arches {
			if _, err := debsFor(a); err != nil {
				return err
			}
		}
		fmt.Printf("packages for %s in %s\n", strings.Join(o.arches, ","), cache)
		return nil
	}
	if o.out == "" && o.oci == "" {
		return errors.New("nothing to write: give --out FILE (docker-archive) or --oci DIR")
	}
	if o.out != "" && len(o.arches) != 1 {
		return errors.New("--out writes one architecture; use --oci for several")
	}
	if o.version == "" {
		v, err := askVersion(ctx, strings.ReplaceAll(o.iolens, "{arch}", runtime.GOARCH))
		if err != nil {
			return err
		}
		o.version = v
	}
	if o.ref == "" {
		o.ref = image.Reference(o.version)
	}
	if _, err := image.ParseRef(o.ref); err != nil {
		return err
	}
	m := image.Manifest{Ref: o.ref}
	imgs := map[string]v1.Image{}
	for _, a := range o.arches {
		debs, err := debsFor(a)
		if err != nil {
			return err
		}
		b, err := image.Build(ctx, image.AgentSpec(a, strings.ReplaceAll(o.iolens, "{arch}", a), o.version, debs))
		if err != nil {
			return err
		}
		d, err := b.Image.Digest()
		if err != nil {
			return err
		}
		imgs[a] = b.Image
		m.Images = append(m.Images, image.Platform{Arch: a, Digest: d.String(), Packages: b.Packages})
		if o.out != "" {
			if err := image.WriteDockerArchive(b.Image, o.ref, o.out); err != nil {
				return err
			}
			fmt.Printf("%s %s %s %s\n", o.out, o.ref, a, d)
		}
	}
	if o.oci != "" {
		idx, err := image.Index(imgs)
		if err != nil {
			return err
		}
		if err := image.WriteLayout(idx, o.ref, o.oci); err != nil {
			return err
		}
		d, err := idx.Digest()
		if err != nil {
			return err
		}
		m.IndexDigest = d.String()
		fmt.Printf("%s %s %s %s\n", o.oci, o.ref, strings.Join(o.arches, ","), d)
	}
	if o.manifest != "" {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.manifest, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// askVersion runs 'iolens --version' ("iolens version X").
func askVersion(ctx context.Context, iolens string) (string, error) {
	v, err := exec.CommandContext(ctx, iolens, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("asking %s for its version (or pass --version): %w", iolens, err)
	}
	f := strings.Fields(string(v))
	if len(f) == 0 {
		return "", fmt.Errorf("%s --version printed nothing", iolens)
	}
	return f[len(f)-1], nil
}
