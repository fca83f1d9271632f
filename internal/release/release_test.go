package release

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestArchiveReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	lic := filepath.Join(dir, "LICENSE")
	os.WriteFile(bin, []byte("binary"), 0o700)
	os.WriteFile(lic, []byte("Apache License"), 0o600)
	members := []Member{{bin, "iolens", 0o755}, {lic, "LICENSE", 0o644}}
	mtime := time.Unix(1700000000, 0)
	a, b := filepath.Join(dir, "a.tar.gz"), filepath.Join(dir, "b.tar.gz")
	if err := archive(a, members, mtime); err != nil {
		t.Fatal(err)
	}
	// Another mtime on disk must not matter.
	os.Chtimes(bin, time.Now(), time.Now())
	if err := archive(b, members, mtime); err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ba, bb) {
		t.Error("same inputs, different archives")
	}
	files, err := readArchive(a)
	if err != nil {
		t.Fatal(err)
	}
	if string(files["iolens"]) != "binary" || string(files["LICENSE"]) != "Apache License" || len(files) != 2 {
		t.Errorf("got %v", files)
	}
}

func TestParseSums(t *testing.T) {
	const s = "3be9325bd1828653fafb4cf367bbd0d5bd9acc7a3d01d79c18459bd80c04ed49"
	tests := []struct {
		name, in string
		want     map[string]string
		bad      bool
	}{
		{"text mode", s + "  a.tar.gz\n", map[string]string{"a.tar.gz": s}, false},
		{"binary mode", s + " *a.tar.gz\n", map[string]string{"a.tar.gz": s}, false},
		{"upper case", strings.ToUpper(s) + "  a\n", map[string]string{"a": s}, false},
		{"short", "abcd  a\n", nil, true},
		{"no name", s + "  \n", nil, true},
		{"path", s + "  ../etc/passwd\n", nil, true},
		{"subdir", s + "  oci/index.json\n", nil, true},
		{"twice", s + "  a\n" + s + "  a\n", nil, true},
		{"one space", s + " a\n", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSums(strings.NewReader(tc.in))
			if (err != nil) != tc.bad {
				t.Fatalf("err %v, want error %v", err, tc.bad)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func FuzzParseSums(f *testing.F) {
	f.Add("3be9325bd1828653fafb4cf367bbd0d5bd9acc7a3d01d79c18459bd80c04ed49  a.tar.gz\n")
	f.Add("x *y\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		sums, err := parseSums(strings.NewReader(s))
		if err != nil {
			return
		}
		for name, sum := range sums {
			if name != filepath.Base(name) || len(sum) != 64 {
				t.Fatalf("accepted %q %q", name, sum)
			}
		}
	})
}

func TestKrewManifest(t *testing.T) {
	tmpl, err := os.ReadFile("../../deploy/krew/iolens.yaml")
	if err != nil {
		t.Fatal(err)
	}
	archives := []KrewArchive{
		{"linux", "amd64", "kubectl-iolens_v1.2.3_linux_amd64.tar.gz", strings.Repeat("a", 64)},
		{"linux", "arm64", "kubectl-iolens_v1.2.3_linux_arm64.tar.gz", strings.Repeat("b", 64)},
	}
	b, err := krewManifest(tmpl, "v1.2.3", "https://example.com/dl/v1.2.3", archives)
	if err != nil {
		t.Fatal(err)
	}
	k, err := parseKrew(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if k.Spec.Version != "v1.2.3" || k.Metadata.Name != "iolens" || !strings.Contains(k.Spec.Description, "PersistentVolumeClaims") {
		t.Errorf("spec %+v", k.Spec)
	}
	if len(k.Spec.Platforms) != 2 {
		t.Fatalf("%d platforms", len(k.Spec.Platforms))
	}
	p := k.Spec.Platforms[1]
	if p.URI != "https://example.com/dl/v1.2.3/kubectl-iolens_v1.2.3_linux_arm64.tar.gz" || p.SHA256 != strings.Repeat("b", 64) ||
		p.Selector.MatchLabels["arch"] != "arm64" || p.Bin != "kubectl-iolens" {
		t.Errorf("platform %+v", p)
	}
	for _, v := range []string{"1.2.3", "v1.2", "abc1234-dirty", "v01.2.3"} {
		if _, err := krewManifest(tmpl, v, "u", archives); err == nil {
			t.Errorf("version %q accepted", v)
		}
	}
	if _, err := parseKrew([]byte("kind: Plugin\nmetadata: {name: x}\nspec: {bogus: 1}\n")); err == nil {
		t.Error("unknown field accepted")
	}
}

func TestSBOM(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/iolens/iolens"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
			{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.1.0"}},
		}}
	in := SBOMInput{Version: "v1.2.3", Binaries: []*debug.BuildInfo{bi, bi}, ImageRef: "ghcr.io/iolens/iolens:1.2.3",
		ImageDigest: "sha256:" + strings.Repeat("c", 64), DebianRelease: "debian-12", Created: time.Unix(0, 0),
		Debs: []DebPackage{{"arm64", "fio", "3.33-3", strings.Repeat("d", 64)}, {"amd64", "busybox-static", "1:1.35.0-4", strings.Repeat("e", 64)}}}
	a, err := sbom(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sbom(in)
	if !bytes.Equal(a, b) {
		t.Error("not deterministic")
	}
	var doc SPDX
	if err := json.Unmarshal(a, &doc); err != nil {
		t.Fatal(err)
	}
	purls := map[string]bool{}
	ids := map[string]bool{"SPDXRef-DOCUMENT": true}
	for _, p := range doc.Packages {
		if ids[p.SPDXID] {
			t.Errorf("duplicate id %s", p.SPDXID)
		}
		ids[p.SPDXID] = true
		for _, r := range p.ExternalRefs {
			purls[r.Locator] = true
		}
	}
	for _, want := range []string{
		"pkg:golang/github.com/iolens/iolens@v1.2.3",
		"pkg:golang/github.com/spf13/cobra@v1.10.2",
		"pkg:golang/example.com/new@v1.1.0", // the replacement is what was linked
		"pkg:golang/stdlib@go1.26.8",
		"pkg:deb/debian/fio@3.33-3?arch=arm64&distro=debian-12",
		"pkg:deb/debian/busybox-static@1:1.35.0-4?arch=amd64&distro=debian-12",
		"pkg:oci/iolens@sha256%3A" + strings.Repeat("c", 64) + "?repository_url=ghcr.io%2Fiolens%2Fiolens",
	} {
		if !purls[want] {
			t.Errorf("no %s", want)
		}
	}
	if purls["pkg:golang/example.com/old@v1.0.0"] {
		t.Error("the replaced module is listed")
	}
	for _, r := range doc.Relationships {
		if !ids[r.Element] || !ids[r.Related] {
			t.Errorf("dangling %+v", r)
		}
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" || !strings.HasPrefix(doc.DocumentNamespace, "https://github.com/iolens/iolens/spdx/v1.2.3-") {
		t.Errorf("header %+v", doc)
	}
}

// fakeDist builds two tiny static Go programs per architecture that answer
// 'version -o json' and '--version' like iolens, and packages them.
func fakeDist(t *testing.T) (dir, version string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds Go programs for two architectures")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain in PATH")
	}
	version = "v1.2.3-rc.1"
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/fake\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), []byte(`package main

import (
	"fmt"
	"os"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("fake version " + version)
		return
	}
	fmt.Printf("{\n  \"version\": %q,\n  \"commit\": \"0123abcd\",\n  \"go\": \"go1\"\n}\n", version)
}
`), 0o644)
	dir = t.TempDir()
	for _, a := range []string{"amd64", "arm64"} {
		out := buildDir(dir, a)
		cmd := exec.Command(goBin, "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", filepath.Join(out, "iolens"), ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+a, "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		b, _ := os.ReadFile(filepath.Join(out, "iolens"))
		os.WriteFile(filepath.Join(out, "kubectl-iolens"), b, 0o755)
	}
	files, err := Dist(DistSpec{Dir: dir, Version: version, Arches: []string{"amd64", "arm64"},
		License: "../../LICENSE", Readme: "../../README.md", KrewTemplate: "../../deploy/krew/iolens.yaml",
		Manifests: []string{"../../deploy/watch-daemonset.yaml"},
		BaseURL:   "https://example.com/dl", Mtime: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 {
		t.Errorf("files %v", files)
	}
	return dir, version
}

func checkScript(t *testing.T, dir string) (string, error) {
	t.Helper()
	out, err := exec.Command("../../test/release/check.sh", dir).CombinedOutput()
	return string(out), err
}

func TestDistCheckAndScript(t *testing.T) {
	dir, v := fakeDist(t)
	ctx := context.Background()
	run := runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"
	res, err := Check(ctx, CheckSpec{Dir: dir, Arches: []string{"amd64", "arm64"}, Run: run})
	if err != nil {
		t.Fatalf("check of a good dist: %v\n%+v", err, res)
	}
	ran := 0
	for _, r := range res {
		if r.Skipped == "" {
			ran++
		}
	}
	if ran < 6 {
		t.Errorf("only %d checks ran: %+v", ran, res)
	}
	if out, err := checkScript(t, dir); err != nil {
		t.Fatalf("check.sh on a good dist: %v\n%s", err, out)
	}

	// A krew manifest whose sha256 is not the archive's.
	krew := filepath.Join(dir, krewFile)
	good, _ := os.ReadFile(krew)
	k, _ := parseKrew(good)
	bad := bytes.Replace(good, []byte(k.Spec.Platforms[0].SHA256), []byte(strings.Repeat("0", 64)), 1)
	os.WriteFile(krew, bad, 0o644)
	if _, err := Check(ctx, CheckSpec{Dir: dir, Arches: []string{"amd64", "arm64"}}); err == nil || !strings.Contains(err.Error(), "krew") {
		t.Errorf("wrong krew sha256: %v", err)
	}
	if out, err := checkScript(t, dir); err == nil || !strings.Contains(out, "the manifest says") {
		t.Errorf("check.sh passed a wrong krew sha256:\n%s", out)
	}
	os.WriteFile(krew, good, 0o644)

	// An archive changed after SHA256SUMS was written.
	arch := filepath.Join(dir, pluginArchive(v, "arm64"))
	b, _ := os.ReadFile(arch)
	b[len(b)/2] ^= 0xff
	os.WriteFile(arch, b, 0o644)
	if _, err := Check(ctx, CheckSpec{Dir: dir, Arches: []string{"amd64", "arm64"}}); err == nil || !strings.Contains(err.Error(), "SHA256SUMS") {
		t.Errorf("changed archive: %v", err)
	}
	if out, err := checkScript(t, dir); err == nil || !strings.Contains(out, "FAIL  sha256sum -c") {
		t.Errorf("check.sh passed a changed archive:\n%s", out)
	}

	// The DaemonSet of the release runs the release's image.
	ds := filepath.Join(dir, "watch-daemonset.yaml")
	b, _ = os.ReadFile(ds)
	if !bytes.Contains(b, []byte("image: ghcr.io/iolens/iolens:"+strings.TrimPrefix(v, "v")+"\n")) {
		t.Errorf("released DaemonSet:\n%s", b)
	}

	// A release missing a platform.
	if _, err := Check(ctx, CheckSpec{Dir: dir, Arches: []string{"amd64", "arm64", "riscv64"}}); err == nil {
		t.Error("a missing platform passed")
	}
}

func TestDistRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := Dist(DistSpec{Dir: dir, Version: "abc1234-dirty"}); err == nil {
		t.Error("a non-semver version was accepted")
	}
	// Not a Go binary.
	os.MkdirAll(buildDir(dir, "amd64"), 0o755)
	os.WriteFile(filepath.Join(buildDir(dir, "amd64"), "iolens"), []byte("#!/bin/sh\n"), 0o755)
	if _, err := Dist(DistSpec{Dir: dir, Version: "v1.0.0", Arches: []string{"amd64"}}); err == nil {
		t.Error("a shell script was packaged as iolens")
	}
}

func TestPinImage(t *testing.T) {
	in := []byte("spec:\n  containers:\n  - name: watch\n    image: ghcr.io/iolens/iolens:0.1.0\n    args: [watch]\n  - image: ghcr.io/iolens/iolens@sha256:" + strings.Repeat("a", 64) + "\n  - image: busybox:1.36\n")
	digest := "sha256:" + strings.Repeat("b", 64)
	out, err := pinImage(in, pinnedRef("v0.3.0", digest))
	if err != nil {
		t.Fatal(err)
	}
	want := "spec:\n  containers:\n  - name: watch\n    image: ghcr.io/iolens/iolens:0.3.0@" + digest + "\n    args: [watch]\n  - image: ghcr.io/iolens/iolens:0.3.0@" + digest + "\n  - image: busybox:1.36\n"
	if string(out) != want {
		t.Errorf("pinned:\n%s\nwant:\n%s", out, want)
	}
	if _, err := pinImage([]byte("image: busybox:1.36\n"), "x"); err == nil {
		t.Error("a manifest without the agent image was accepted")
	}
}
