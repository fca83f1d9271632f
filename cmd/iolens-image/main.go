// Command image builds the iolens agent image as a docker-archive tarball,
// without a container daemon, for 'make image':
//
//	go run ./cmd/iolens-image --iolens bin/iolens --out bin/iolens-image.tar
//
// Without --ref, the reference is the one the iolens binary uses by default
// (ghcr.io/iolens/iolens:<its version>), so 'iolens k8s run' finds the
// image once it is loaded into the node's container runtime.
//
// The image holds iolens, the host's fio with the libraries it loads, and a
// static busybox (sh, mkdir, rm: what a local-path provisioner's helper pod
// runs). The Dockerfile builds the equivalent image from Debian for users
// with a registry.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/iolens/iolens/internal/image"
)

func main() {
	out := flag.String("out", "bin/iolens-image.tar", "tarball to write")
	ref := flag.String("ref", "", "image reference with a pinned tag (default: the one --iolens uses)")
	iolens := flag.String("iolens", "bin/iolens", "static iolens binary")
	fio := flag.String("fio", "", "fio binary (default: the one in PATH)")
	busybox := flag.String("busybox", "", "static busybox (default: busybox in PATH)")
	pause := flag.String("pause", "", "build a pause image from this static binary instead")
	flag.Parse()
	if err := run(*out, *ref, *iolens, *fio, *busybox, *pause); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out, ref, iolens, fio, busybox, pause string) error {
	ctx := context.Background()
	if ref == "" {
		if pause != "" {
			return fmt.Errorf("--ref is required with --pause")
		}
		v, err := exec.CommandContext(ctx, iolens, "--version").Output()
		if err != nil {
			return fmt.Errorf("asking %s for its version: %w", iolens, err)
		}
		// "iolens version X"
		f := strings.Fields(string(v))
		if len(f) == 0 {
			return fmt.Errorf("%s --version printed nothing", iolens)
		}
		ref = image.Reference(f[len(f)-1])
	}
	var spec image.Spec
	if pause != "" {
		spec = image.Spec{Ref: ref, Files: []image.File{{Src: pause, Dst: "/pause"}}, Entrypoint: []string{"/pause"}}
	} else {
		var err error
		if fio == "" {
			if fio, err = exec.LookPath("fio"); err != nil {
				return fmt.Errorf("fio not found (apt-get install fio): %w", err)
			}
		}
		if busybox == "" {
			if busybox, err = exec.LookPath("busybox"); err != nil {
				return fmt.Errorf("busybox not found (apt-get install busybox-static): %w", err)
			}
		}
		if libs, err := image.SharedLibs(ctx, busybox); err != nil || len(libs) > 0 {
			return fmt.Errorf("%s is not a static busybox (apt-get install busybox-static)", busybox)
		}
		spec = image.Spec{
			Ref: ref,
			Files: []image.File{
				{Src: iolens, Dst: "/usr/local/bin/iolens"},
				{Src: fio, Dst: "/usr/bin/fio", WithLibs: true},
			},
			Busybox:    busybox,
			Applets:    image.DefaultApplets,
			Dirs:       []string{"/tmp", "/data", "/host"},
			Entrypoint: []string{"/usr/local/bin/iolens"},
			Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
			Passwd:     []string{"root:x:0:0:root:/root:/bin/sh", "iolens:x:65532:65532:iolens:/tmp:/bin/sh"},
		}
	}
	digest, err := image.Build(ctx, spec, out)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", out, ref, strings.TrimSpace(digest))
	return nil
}
