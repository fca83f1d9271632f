package release

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"golang.org/x/sys/unix"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/image"
)

// Result is the outcome of one check.
type Result struct {
	Name string
	// Skipped says why the check did not run ("" when it ran).
	Skipped string
	Err     error
}

// CheckSpec says what to check.
type CheckSpec struct {
	Dir string
	// Arches the release must cover.
	Arches []string
	// Run executes the host architecture's binaries (and, as root, the
	// agent image's iolens and fio in a chroot).
	Run bool
}

// Check verifies a dist directory as a user and a registry would see it:
// checksums, the krew manifest's hashes, the archives' contents, the
// binaries of this machine's architecture, and the OCI layout. Every
// check runs; the error lists those that failed.
func Check(ctx context.Context, spec CheckSpec) ([]Result, error) {
	var res []Result
	add := func(name string, err error) { res = append(res, Result{Name: name, Err: err}) }
	skip := func(name, why string) { res = append(res, Result{Name: name, Skipped: why}) }

	sumsB, err := os.ReadFile(filepath.Join(spec.Dir, sumsFile))
	if err != nil {
		return nil, &hint.Error{Err: err, Advice: "run 'make dist' first"}
	}
	sums, err := parseSums(bytes.NewReader(sumsB))
	if err != nil {
		return nil, err
	}
	add("SHA256SUMS matches every file it lists", checkSums(spec.Dir, sums))

	kb, err := os.ReadFile(filepath.Join(spec.Dir, krewFile))
	if err != nil {
		return nil, err
	}
	krew, err := parseKrew(kb)
	if err != nil {
		return nil, err
	}
	v := krew.Spec.Version
	add("krew manifest version "+v+" is semver", checkVersion(v))
	add("krew manifest sha256 match the archives", checkKrew(spec.Dir, krew, spec.Arches))

	expected := []string{krewFile, sbomFile(v)}
	for _, a := range spec.Arches {
		expected = append(expected, binaryArchive(v, a), pluginArchive(v, a))
	}
	add("SHA256SUMS lists every release file", listed(sums, expected))

	bins := map[string]map[string][]byte{}
	var archErr []error
	for _, a := range spec.Arches {
		files, err := readArchive(filepath.Join(spec.Dir, binaryArchive(v, a)))
		if err == nil {
			err = checkArchive(files, a)
		}
		if err != nil {
			archErr = append(archErr, err)
		}
		bins[a] = files
	}
	add("archives hold static iolens and kubectl-iolens of their architecture, LICENSE, README.md", errors.Join(archErr...))

	add("SBOM is SPDX 2.3 JSON naming iolens "+v, checkSBOM(filepath.Join(spec.Dir, sbomFile(v)), v))
	if _, ok := sums[watchManifest]; ok {
		add(watchManifest+" runs the agent image "+image.Reference(v), checkPinned(filepath.Join(spec.Dir, watchManifest), v))
	}

	host := runtime.GOARCH
	if !spec.Run {
		skip("iolens version from the "+host+" archive", "not asked to run binaries")
	} else if _, ok := bins[host]; !ok {
		skip("iolens version from the "+host+" archive", "no archive for this machine's architecture")
	} else {
		add("iolens version -o json from the "+host+" archive says "+v, runVersion(ctx, bins[host], v))
	}

	if _, err := os.Stat(filepath.Join(spec.Dir, ociDir)); err != nil {
		skip("OCI layout", "no "+filepath.Join(spec.Dir, ociDir)+" (make dist builds it)")
		return res, failed(res)
	}
	idx, err := checkLayout(filepath.Join(spec.Dir, ociDir), v, spec.Arches, bins)
	add("OCI layout: one index tagged "+image.Tag(v)+" with linux/"+strings.Join(spec.Arches, ", linux/")+", each with its archive's iolens, fio and busybox", err)
	if err == nil {
		add("image record matches the layout", checkImageRecord(filepath.Join(spec.Dir, imageFile(v)), sums, idx, v))
	}
	switch {
	case !spec.Run:
		skip("agent image runs iolens version and fio --version ("+host+")", "not asked to run binaries")
	case err != nil:
		skip("agent image runs iolens version and fio --version ("+host+")", "the layout is broken")
	case os.Geteuid() != 0:
		skip("agent image runs iolens version and fio --version ("+host+")", "needs root (chroot)")
	default:
		add("agent image runs iolens version and fio --version ("+host+")", runImage(ctx, idx, host, v))
	}
	return res, failed(res)
}

func failed(res []Result) error {
	var n []string
	for _, r := range res {
		if r.Err != nil {
			n = append(n, r.Name)
		}
	}
	if len(n) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", errMismatch, strings.Join(n, "; "))
}

func checkSums(dir string, sums map[string]string) error {
	var errs []error
	for _, n := range sortedKeys(sums) {
		got, err := sha256File(filepath.Join(dir, n))
		if err != nil {
			errs = append(errs, err)
		} else if got != sums[n] {
			errs = append(errs, fmt.Errorf("%s: sha256 %s, SHA256SUMS says %s", n, got, sums[n]))
		}
	}
	return errors.Join(errs...)
}

func listed(sums map[string]string, names []string) error {
	var missing []string
	for _, n := range names {
		if _, ok := sums[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not in SHA256SUMS: %s", strings.Join(missing, ", "))
	}
	return nil
}

func checkKrew(dir string, k *KrewPlugin, arches []string) error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range k.Spec.Platforms {
		a := p.Selector.MatchLabels["arch"]
		seen[p.Selector.MatchLabels["os"]+"/"+a] = true
		file := path.Base(p.URI)
		if want := pluginArchive(k.Spec.Version, a); file != want {
			errs = append(errs, fmt.Errorf("%s: uri names %s, want %s", a, file, want))
			continue
		}
		got, err := sha256File(filepath.Join(dir, file))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got != p.SHA256 {
			errs = append(errs, fmt.Errorf("%s: manifest sha256 %s, archive %s", file, p.SHA256, got))
		}
		files, err := readArchive(filepath.Join(dir, file))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, ok := files[p.Bin]; !ok {
			errs = append(errs, fmt.Errorf("%s: no %s", file, p.Bin))
		}
		for _, f := range p.Files {
			if _, ok := files[f.From]; !ok {
				errs = append(errs, fmt.Errorf("%s: no %s", file, f.From))
			}
		}
	}
	for _, a := range arches {
		if !seen["linux/"+a] {
			errs = append(errs, fmt.Errorf("no platform linux/%s", a))
		}
	}
	return errors.Join(errs...)
}

func elfMachine(a string) elf.Machine {
	switch a {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	}
	return elf.EM_NONE
}

// checkStatic says whether b is a static ELF executable for arch a.
func checkStatic(name string, b []byte, a string) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	if f.Machine != elfMachine(a) {
		return fmt.Errorf("%s is for %s, not %s", name, f.Machine, a)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s (%s) is dynamically linked", name, a)
		}
	}
	return nil
}

func checkArchive(files map[string][]byte, a string) error {
	var errs []error
	for _, n := range []string{"iolens", "kubectl-iolens"} {
		if b, ok := files[n]; !ok {
			errs = append(errs, fmt.Errorf("%s archive: no %s", a, n))
		} else if err := checkStatic(n, b, a); err != nil {
			errs = append(errs, err)
		}
	}
	if !bytes.Contains(files["LICENSE"], []byte("Apache License")) {
		errs = append(errs, fmt.Errorf("%s archive: no Apache LICENSE", a))
	}
	if len(files["README.md"]) == 0 {
		errs = append(errs, fmt.Errorf("%s archive: no README.md", a))
	}
	return errors.Join(errs...)
}

func checkSBOM(name, v string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var doc SPDX
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DocumentNamespace == "" || len(doc.Packages) < 2 {
		return fmt.Errorf("%s: not a complete SPDX 2.3 document", name)
	}
	ids := map[string]bool{doc.SPDXID: true}
	for _, p := range doc.Packages {
		ids[p.SPDXID] = true
	}
	for _, r := range doc.Relationships {
		if !ids[r.Element] || !ids[r.Related] {
			return fmt.Errorf("%s: relationship %s %s %s names an unknown element", name, r.Element, r.Type, r.Related)
		}
	}
	if doc.Packages[0].VersionInfo != v {
		return fmt.Errorf("%s: describes %s %s, not %s", name, doc.Packages[0].Name, doc.Packages[0].VersionInfo, v)
	}
	return nil
}

// runVersion runs the archive's iolens and kubectl-iolens from a
// temporary directory.
func runVersion(ctx context.Context, files map[string][]byte, v string) error {
	dir, err := os.MkdirTemp("", "iolens-release-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, n := range []string{"iolens", "kubectl-iolens"} {
		if err := os.WriteFile(filepath.Join(dir, n), files[n], 0o755); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "iolens"), "version", "-o", "json").Output()
	if err != nil {
		return fmt.Errorf("iolens version: %w", err)
	}
	if err := checkVersionJSON(out, v, false); err != nil {
		return err
	}
	out, err = exec.CommandContext(ctx, filepath.Join(dir, "kubectl-iolens"), "--version").Output()
	if err != nil {
		return fmt.Errorf("kubectl-iolens --version: %w", err)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), " "+v) {
		return fmt.Errorf("kubectl-iolens --version printed %q, want version %s", out, v)
	}
	return nil
}

func checkVersionJSON(out []byte, v string, needFio bool) error {
	var got struct{ Version, Commit, Go, Fio, FioError string }
	if err := json.Unmarshal(out, &got); err != nil {
		return fmt.Errorf("iolens version -o json: %w: %s", err, out)
	}
	if got.Version != v || got.Commit == "" || got.Go == "" {
		return fmt.Errorf("iolens version says version %q commit %q go %q, want version %s and a commit", got.Version, got.Commit, got.Go, v)
	}
	if needFio && !strings.HasPrefix(got.Fio, "fio-") {
		return fmt.Errorf("iolens in the image finds no fio: %s", out)
	}
	return nil
}

func checkLayout(dir, v string, arches []string, bins map[string]map[string][]byte) (v1.ImageIndex, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	tm, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(tm.Manifests) != 1 {
		return nil, fmt.Errorf("index.json has %d entries, want 1", len(tm.Manifests))
	}
	if got := tm.Manifests[0].Annotations[image.AnnotationRefName]; got != image.Tag(v) {
		return nil, fmt.Errorf("index.json tag %q, want %q", got, image.Tag(v))
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var errs []error
	var plats []string
	for _, m := range im.Manifests {
		if m.Platform == nil {
			return nil, errors.New("an index entry has no platform")
		}
		a := m.Platform.Architecture
		plats = append(plats, m.Platform.OS+"/"+a)
		img, err := idx.Image(m.Digest)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if cf.Architecture != a || cf.OS != "linux" {
			errs = append(errs, fmt.Errorf("%s: config says %s/%s", a, cf.OS, cf.Architecture))
		}
		files, err := imageFiles(img, map[string]bool{"/usr/local/bin/iolens": true})
		if err != nil {
			return nil, err
		}
		for _, p := range []string{"/usr/bin/fio", "/usr/bin/busybox", "/usr/bin/sh", "/usr/local/bin/iolens"} {
			if _, ok := files.entries[p]; !ok {
				errs = append(errs, fmt.Errorf("%s image: no %s", a, p))
			}
		}
		if want, ok := bins[a]["iolens"]; ok && !bytes.Equal(files.data["/usr/local/bin/iolens"], want) {
			errs = append(errs, fmt.Errorf("%s image: iolens differs from the one in %s", a, binaryArchive(v, a)))
		}
	}
	sort.Strings(plats)
	var want []string
	for _, a := range arches {
		want = append(want, "linux/"+a)
	}
	sort.Strings(want)
	if strings.Join(plats, " ") != strings.Join(want, " ") {
		errs = append(errs, fmt.Errorf("platforms %v, want %v", plats, want))
	}
	return idx, errors.Join(errs...)
}

// layerFiles are an image's paths (with their tar type) and the contents
// of the files asked for.
type layerFiles struct {
	entries map[string]byte
	data    map[string][]byte
}

func imageFiles(img v1.Image, want map[string]bool) (*layerFiles, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	out := &layerFiles{entries: map[string]byte{}, data: map[string][]byte{}}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				rc.Close()
				return nil, err
			}
			p := path.Clean("/" + h.Name)
			out.entries[p] = h.Typeflag
			if want[p] {
				b, err := io.ReadAll(io.LimitReader(tr, maxMember))
				if err != nil {
					rc.Close()
					return nil, err
				}
				out.data[p] = b
			}
		}
		rc.Close()
	}
	return out, nil
}

func checkImageRecord(name string, sums map[string]string, idx v1.ImageIndex, v string) error {
	if _, ok := sums[filepath.Base(name)]; !ok {
		return fmt.Errorf("%s is not in SHA256SUMS", filepath.Base(name))
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var m image.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	if m.IndexDigest != d.String() || m.Ref != image.Reference(v) {
		return fmt.Errorf("%s: %s %s, layout %s %s", filepath.Base(name), m.Ref, m.IndexDigest, image.Reference(v), d)
	}
	return nil
}

// runImage unpacks the image for arch into a temporary root and runs its
// iolens there (chroot): iolens must start and find fio, with every
// library fio loads.
func runImage(ctx context.Context, idx v1.ImageIndex, arch, v string) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	var img v1.Image
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.Architecture == arch {
			if img, err = idx.Image(m.Digest); err != nil {
				return err
			}
		}
	}
	if img == nil {
		return fmt.Errorf("no %s image", arch)
	}
	root, err := os.MkdirTemp("", "iolens-image-root-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if err := unpack(img, root); err != nil {
		return err
	}
	// A container runtime provides /dev; iolens hands fio /dev/null as
	// its stdin.
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		return err
	}
	if err := unix.Mknod(filepath.Join(root, "dev", "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		return fmt.Errorf("mknod /dev/null: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chroot", root, "/usr/local/bin/iolens", "version", "-o", "json")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("chroot %s iolens version: %w: %s", root, err, stderr.String())
	}
	return checkVersionJSON(out, v, true)
}

// unpack writes the image's layers under root. Entries that would land
// outside it are refused; links are written as they are, since nothing
// follows them outside the chroot.
func unpack(img v1.Image, root string) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		err = unpackTar(rc, root)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func unpackTar(r io.Reader, root string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel := path.Clean("/" + h.Name)
		if strings.Contains(h.Name, "..") {
			return fmt.Errorf("layer entry %q climbs out", h.Name)
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		// A symlink among the parents would carry the write out of root.
		for d := filepath.Dir(dst); len(d) > len(root); d = filepath.Dir(d) {
			if st, err := os.Lstat(d); err == nil && st.Mode()&os.ModeSymlink != 0 {
				return fmt.Errorf("layer entry %q goes through the symlink %s", h.Name, d)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, os.FileMode(h.Mode&0o777)|dirSticky(h.Mode)); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode&0o777))
			if err != nil {
				return err
			}
			_, err = io.Copy(f, io.LimitReader(tr, maxMember))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return err
			}
		}
	}
}

func dirSticky(mode int64) os.FileMode {
	if mode&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// checkPinned: every agent image a released manifest names is the
// release's.
func checkPinned(name, v string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	ms := imageLine.FindAll(b, -1)
	if len(ms) == 0 {
		return fmt.Errorf("%s names no agent image", filepath.Base(name))
	}
	for _, m := range ms {
		ref := strings.TrimSpace(string(m[bytes.Index(m, []byte("image:"))+len("image:"):]))
		if ref != image.Reference(v) && !strings.HasPrefix(ref, image.Reference(v)+"@sha256:") {
			return fmt.Errorf("%s runs %s, not %s", filepath.Base(name), ref, image.Reference(v))
		}
	}
	return nil
}
