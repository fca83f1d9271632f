// Command iolens-release packages a release from the binaries and the
// agent image 'make dist' built, and checks a dist directory:
//
//	go run ./cmd/iolens-release dist --version v0.2.0 --dir dist
//	go run ./cmd/iolens-release check --dir dist
//
// dist writes, per architecture, iolens_<v>_linux_<arch>.tar.gz (iolens,
// kubectl-iolens, LICENSE, README.md) and kubectl-iolens_<v>_linux_<arch>.tar.gz
// (the krew archive), then iolens.yaml (the krew manifest),
// iolens_<v>.spdx.json (SBOM), iolens-image_<v>.json (the agent image's
// reference, digests and packages) and SHA256SUMS over all of them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/release"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "dist" && os.Args[1] != "check") {
		fmt.Fprintln(os.Stderr, "usage: iolens-release dist|check [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if os.Args[1] == "dist" {
		err = dist(os.Args[2:])
	} else {
		err = check(ctx, os.Args[2:])
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "iolens-release:", err)
		if h := hint.Of(err); h != "" {
			fmt.Fprintln(os.Stderr, "hint:", h)
		}
		os.Exit(1)
	}
}

func dist(args []string) error {
	fs := flag.NewFlagSet("dist", flag.ExitOnError)
	var s release.DistSpec
	arches := fs.String("arch", "amd64,arm64", "architectures")
	fs.StringVar(&s.Dir, "dir", "dist", "dist directory (binaries in build/linux_<arch>/)")
	fs.StringVar(&s.Version, "version", "", "release version (vMAJOR.MINOR.PATCH[-PRE])")
	fs.StringVar(&s.License, "license", "LICENSE", "license file for the archives")
	fs.StringVar(&s.Readme, "readme", "README.md", "readme for the archives")
	fs.StringVar(&s.KrewTemplate, "krew-template", "deploy/krew/iolens.yaml", "krew manifest template")
	fs.StringVar(&s.BaseURL, "url", "", "where the release's files are downloaded from (default: the GitHub release of --version)")
	fs.StringVar(&s.ImageManifest, "image", "", "the agent image record (cmd/iolens-image --manifest)")
	fs.StringVar(&s.DebianRelease, "debian", "debian-12", "distro qualifier of the image packages' purls")
	manifests := fs.String("manifests", "deploy/watch-daemonset.yaml", "Kubernetes manifests released with the agent image pinned, comma-separated")
	fs.Parse(args)
	s.Arches = strings.Split(*arches, ",")
	if *manifests != "" {
		s.Manifests = strings.Split(*manifests, ",")
	}
	if s.BaseURL == "" {
		s.BaseURL = "https://github.com/iolens/iolens/releases/download/" + s.Version
	}
	// SOURCE_DATE_EPOCH: the commit's time, so archives are reproducible.
	s.Mtime = time.Unix(0, 0)
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a Unix time", e)
		}
		s.Mtime = time.Unix(n, 0)
	}
	files, err := release.Dist(s)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println(s.Dir + "/" + f)
	}
	return nil
}

func check(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	var s release.CheckSpec
	arches := fs.String("arch", "amd64,arm64", "architectures the release must cover")
	fs.StringVar(&s.Dir, "dir", "dist", "dist directory")
	norun := fs.Bool("no-run", false, "do not run the binaries")
	fs.Parse(args)
	s.Arches, s.Run = strings.Split(*arches, ","), !*norun
	res, err := release.Check(ctx, s)
	for _, r := range res {
		switch {
		case r.Skipped != "":
			fmt.Printf("skip  %s: %s\n", r.Name, r.Skipped)
		case r.Err != nil:
			fmt.Printf("FAIL  %s\n      %s\n", r.Name, strings.ReplaceAll(r.Err.Error(), "\n", "\n      "))
		default:
			fmt.Printf("ok    %s\n", r.Name)
		}
	}
	return err
}
