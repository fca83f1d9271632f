package release

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/image"
)

// Names of the release's files, for version v and architecture a.
func binaryArchive(v, a string) string { return fmt.Sprintf("iolens_%s_linux_%s.tar.gz", v, a) }
func pluginArchive(v, a string) string { return fmt.Sprintf("kubectl-iolens_%s_linux_%s.tar.gz", v, a) }
func sbomFile(v string) string         { return fmt.Sprintf("iolens_%s.spdx.json", v) }
func imageFile(v string) string        { return fmt.Sprintf("iolens-image_%s.json", v) }

// krewFile is the generated krew manifest's name.
const krewFile = "iolens.yaml"

// ociDir is the agent image's OCI layout, under the dist directory.
const ociDir = "oci"

// buildDir holds the binaries 'make dist' compiles, per architecture.
func buildDir(dist, a string) string { return filepath.Join(dist, "build", "linux_"+a) }

// DistSpec says what to package.
type DistSpec struct {
	Dir     string
	Version string
	Arches  []string
	// License and Readme go into every archive.
	License, Readme string
	// KrewTemplate is deploy/krew/iolens.yaml; BaseURL is where the
	// release's files will be downloaded from.
	KrewTemplate, BaseURL string
	// ImageManifest is what cmd/iolens-image --manifest wrote ("" when no
	// image was built).
	ImageManifest string
	// Manifests are Kubernetes manifests that run the agent image
	// (deploy/watch-daemonset.yaml): each is released with the image
	// pinned to the release's tag and digest, under its base name.
	Manifests     []string
	DebianRelease string
	// Mtime is every archive member's timestamp (SOURCE_DATE_EPOCH).
	Mtime time.Time
}

// Dist writes the archives, the SBOM, the krew manifest, the image record
// and SHA256SUMS into spec.Dir, from the binaries in BuildDir, and returns
// the names of the files a release uploads.
func Dist(spec DistSpec) ([]string, error) {
	if err := checkVersion(spec.Version); err != nil {
		return nil, err
	}
	v := spec.Version
	var files []string
	var infos []*debug.BuildInfo
	var krew []KrewArchive
	for _, a := range spec.Arches {
		bd := buildDir(spec.Dir, a)
		for _, b := range []string{"iolens", "kubectl-iolens"} {
			bi, err := buildinfo.ReadFile(filepath.Join(bd, b))
			if err != nil {
				return nil, &hint.Error{Err: fmt.Errorf("%s: %w", filepath.Join(bd, b), err), Advice: "build the binaries first ('make dist' does)"}
			}
			if arch := setting(bi, "GOARCH"); arch != a {
				return nil, fmt.Errorf("%s was built for %s, not %s", filepath.Join(bd, b), arch, a)
			}
			if setting(bi, "CGO_ENABLED") != "0" {
				return nil, fmt.Errorf("%s: built with cgo; release binaries are static (CGO_ENABLED=0)", filepath.Join(bd, b))
			}
			infos = append(infos, bi)
		}
		name := binaryArchive(v, a)
		if err := archive(filepath.Join(spec.Dir, name), []Member{
			{filepath.Join(bd, "iolens"), "iolens", 0o755},
			{filepath.Join(bd, "kubectl-iolens"), "kubectl-iolens", 0o755},
			{spec.License, "LICENSE", 0o644},
			{spec.Readme, "README.md", 0o644},
		}, spec.Mtime); err != nil {
			return nil, err
		}
		files = append(files, name)
		pname := pluginArchive(v, a)
		if err := archive(filepath.Join(spec.Dir, pname), []Member{
			{filepath.Join(bd, "kubectl-iolens"), "kubectl-iolens", 0o755},
			{spec.License, "LICENSE", 0o644},
		}, spec.Mtime); err != nil {
			return nil, err
		}
		sum, err := sha256File(filepath.Join(spec.Dir, pname))
		if err != nil {
			return nil, err
		}
		files = append(files, pname)
		krew = append(krew, KrewArchive{OS: "linux", Arch: a, File: pname, SHA256: sum})
	}

	tmpl, err := os.ReadFile(spec.KrewTemplate)
	if err != nil {
		return nil, err
	}
	km, err := krewManifest(tmpl, v, spec.BaseURL, krew)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(spec.Dir, krewFile), km, 0o644); err != nil {
		return nil, err
	}
	files = append(files, krewFile)

	in := SBOMInput{Version: v, Binaries: infos, DebianRelease: spec.DebianRelease, Created: spec.Mtime}
	digest := ""
	if spec.ImageManifest != "" {
		b, err := os.ReadFile(spec.ImageManifest)
		if err != nil {
			return nil, err
		}
		var m image.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", spec.ImageManifest, err)
		}
		if want := image.Reference(v); m.Ref != want {
			return nil, fmt.Errorf("%s: image %s, want %s (built for another version?)", spec.ImageManifest, m.Ref, want)
		}
		in.ImageRef, in.ImageDigest = m.Ref, m.IndexDigest
		digest = m.IndexDigest
		for _, p := range m.Images {
			for _, d := range p.Packages {
				in.Debs = append(in.Debs, DebPackage{Arch: d.Arch, Package: d.Package, Version: d.Version, SHA256: d.SHA256})
			}
		}
		if err := os.WriteFile(filepath.Join(spec.Dir, imageFile(v)), b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, imageFile(v))
	}
	for _, mf := range spec.Manifests {
		b, err := os.ReadFile(mf)
		if err != nil {
			return nil, err
		}
		pinned, err := pinImage(b, pinnedRef(v, digest))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mf, err)
		}
		name := filepath.Base(mf)
		if err := os.WriteFile(filepath.Join(spec.Dir, name), pinned, 0o644); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	sbom, err := sbom(in)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(spec.Dir, sbomFile(v)), sbom, 0o644); err != nil {
		return nil, err
	}
	files = append(files, sbomFile(v))
	if err := writeSums(spec.Dir, files); err != nil {
		return nil, err
	}
	return append(files, sumsFile), nil
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
