package image

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/iolens/iolens/internal/hint"
)

// File is one host file copied into the image.
type File struct {
	Src, Dst string
}

// Deb is a pinned package and the path of its verified .deb.
type Deb struct {
	Pin  Pin
	Path string
}

// Spec describes an image for one architecture.
type Spec struct {
	// Arch is a GOARCH (amd64, arm64).
	Arch string
	// Files are host files for the top layer (iolens itself).
	Files []File
	// Debs are the packages Install takes files from.
	Debs []Deb
	// Install lists paths inside the packages (after the merged-/usr move:
	// /usr/bin/fio) that go into the image with every shared library they
	// load, found from their ELF headers, and the dynamic loader.
	Install []string
	// Busybox, if set, is the image path of a busybox binary; Applets
	// become symlinks to it in the same directory.
	Busybox string
	Applets []string
	// Dirs are created empty (mode 01777 for /tmp, 0755 otherwise).
	Dirs       []string
	Entrypoint []string
	Env        []string
	// Passwd and Group lines, so that tools that look up an id find a name.
	Passwd, Group []string
	// Labels go into the image config (org.opencontainers.image.*).
	Labels map[string]string
}

// Built is an image and what went into it.
type Built struct {
	Image v1.Image
	// Packages are the pins that contributed at least one file.
	Packages []Pin
	// Paths are the files and links of the package layer, sorted.
	Paths []string
}

// defaultApplets are the tools a local-path style provisioner's helper pod
// runs, plus a few for debugging.
func defaultApplets() []string {
	return []string{"sh", "mkdir", "rm", "ls", "cat", "du", "df", "chmod", "sleep", "true"}
}

// epoch is the timestamp of every file and of the image, so the same
// inputs give the same digest.
var epoch = time.Unix(0, 0).UTC()

// Build assembles the image: a package layer (fio, its libraries, busybox,
// the merged-/usr symlinks, dirs, passwd) and a layer of host files
// (iolens), so a new iolens version reuses the package layer.
func Build(ctx context.Context, spec Spec) (*Built, error) {
	a, ok := archInfo(spec.Arch)
	if !ok {
		return nil, &hint.Error{Err: fmt.Errorf("unsupported architecture %q", spec.Arch), Advice: "use amd64 or arm64"}
	}
	base, used, err := packageLayer(ctx, spec, a)
	if err != nil {
		return nil, err
	}
	app := newTree()
	for _, f := range spec.Files {
		b, err := os.ReadFile(f.Src)
		if err != nil {
			return nil, fmt.Errorf("image file: %w", err)
		}
		st, err := os.Stat(f.Src)
		if err != nil {
			return nil, err
		}
		if err := checkMachine(f.Src, b, a); err != nil {
			return nil, err
		}
		app.file(f.Dst, int64(st.Mode().Perm()), b)
	}
	img := empty.Image
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, t := range []*tree{base, app} {
		if len(t.entries) == 0 {
			continue
		}
		b, err := t.tar()
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		if img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "iolens-image"}}); err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", spec.Arch
	if spec.Arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = spec.Entrypoint
	cf.Config.Env = spec.Env
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = spec.Labels
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return &Built{Image: img, Packages: used, Paths: base.names()}, nil
}

// arch is what the ELF resolver needs to know about a GOARCH.
type arch struct {
	goarch  string
	machine elf.Machine
	triplet string
}

func archInfo(goarch string) (arch, bool) {
	switch goarch {
	case "amd64":
		return arch{goarch, elf.EM_X86_64, "x86_64-linux-gnu"}, true
	case "arm64":
		return arch{goarch, elf.EM_AARCH64, "aarch64-linux-gnu"}, true
	}
	return arch{}, false
}

// checkMachine refuses an ELF file built for another architecture than
// the image's (an amd64 iolens in the arm64 image).
func checkMachine(name string, b []byte, a arch) error {
	if !bytes.HasPrefix(b, []byte(elf.ELFMAG)) {
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	if f.Machine != a.machine {
		return &hint.Error{Err: fmt.Errorf("%s is built for %s, the image is for %s (%s)", name, f.Machine, a.goarch, a.machine),
			Advice: "build it with GOARCH=" + a.goarch}
	}
	return nil
}

// debEntry is a package file and the pin it came from.
type debEntry struct {
	DebFile
	pin Pin
}

func packageLayer(ctx context.Context, spec Spec, a arch) (*tree, []Pin, error) {
	t := newTree()
	if len(spec.Debs) == 0 {
		if len(spec.Install) > 0 || spec.Busybox != "" {
			return nil, nil, errors.New("image: Install and Busybox need packages (Debs)")
		}
	}
	files := map[string]debEntry{}
	for _, d := range spec.Debs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if d.Pin.Arch != "" && d.Pin.Arch != spec.Arch {
			return nil, nil, fmt.Errorf("package %s is for %s, the image for %s", d.Pin.Package, d.Pin.Arch, spec.Arch)
		}
		f, err := os.Open(d.Path)
		if err != nil {
			return nil, nil, err
		}
		dfs, err := readDeb(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.Path, err)
		}
		for _, df := range dfs {
			if df.Type == tar.TypeDir {
				continue
			}
			if prev, ok := files[df.Path]; ok && prev.pin.Package != d.Pin.Package {
				return nil, nil, fmt.Errorf("%s is in both %s and %s", df.Path, prev.pin.Package, d.Pin.Package)
			}
			files[df.Path] = debEntry{df, d.Pin}
		}
	}
	r := resolver{files: files, arch: a, tree: t, used: map[string]Pin{}, done: map[string]bool{}}
	roots := append([]string(nil), spec.Install...)
	if spec.Busybox != "" {
		roots = append(roots, spec.Busybox)
	}
	for _, p := range roots {
		if err := r.install(p, ""); err != nil {
			return nil, nil, err
		}
	}
	if spec.Busybox != "" {
		dir := path.Dir(spec.Busybox)
		for _, ap := range spec.Applets {
			if _, taken := t.entries[path.Join(dir, ap)]; !taken {
				t.link(path.Join(dir, ap), path.Base(spec.Busybox))
			}
		}
	}
	if len(t.entries) > 0 {
		// Debian's merged-/usr root: the top-level directories point
		// into /usr (lib64 only where something lives there).
		for _, d := range []string{"bin", "sbin", "lib", "lib64"} {
			if d == "lib64" && !t.hasPrefix("/usr/lib64/") {
				continue
			}
			t.link("/"+d, "usr/"+d)
		}
	}
	for _, d := range spec.Dirs {
		mode := int64(0o755)
		if d == "/tmp" {
			mode = 0o1777
		}
		t.dir(d, mode)
	}
	if len(spec.Passwd) > 0 {
		t.file("/etc/passwd", 0o644, []byte(strings.Join(spec.Passwd, "\n")+"\n"))
	}
	if len(spec.Group) > 0 {
		t.file("/etc/group", 0o644, []byte(strings.Join(spec.Group, "\n")+"\n"))
	}
	used := make([]Pin, 0, len(r.used))
	for _, p := range r.used {
		used = append(used, p)
	}
	sort.Slice(used, func(i, j int) bool { return used[i].Package < used[j].Package })
	return t, used, nil
}

// resolver copies package files into the layer with their ELF dependency
// closure, as the dynamic loader would find it.
type resolver struct {
	files map[string]debEntry
	arch  arch
	tree  *tree
	used  map[string]Pin
	done  map[string]bool
}

// MissingLibraryError names a shared library that no pinned package holds.
type MissingLibraryError struct {
	Library, NeededBy, Arch string
}

func (e *MissingLibraryError) Error() string {
	return fmt.Sprintf("%s needs %s, which none of the packages pinned for %s contains", e.NeededBy, e.Library, e.Arch)
}

// Hint says how to add the package.
func (e *MissingLibraryError) Hint() string {
	return "add the package that ships it (apt-file search " + e.Library + ") to internal/image/debs.in and run scripts/image-pins"
}

// lookup follows symlinks inside the packages from p to a regular file,
// adding every link on the way to the layer.
func (r *resolver) lookup(p string) (string, *debEntry, error) {
	for hops := 0; hops < 40; hops++ {
		e, ok := r.files[p]
		if !ok {
			return "", nil, os.ErrNotExist
		}
		switch e.Type {
		case tar.TypeReg:
			return p, &e, nil
		case tar.TypeSymlink:
			r.tree.link(p, e.Link)
			r.used[e.pin.Package] = e.pin
			if path.IsAbs(e.Link) {
				p = e.Link
			} else {
				p = mergedUsr(path.Join(path.Dir(p), e.Link))
			}
		default:
			return "", nil, os.ErrNotExist
		}
	}
	return "", nil, fmt.Errorf("%s: too many levels of symbolic links", p)
}

func (r *resolver) install(p, neededBy string) error {
	p = mergedUsr(path.Clean(p))
	real, e, err := r.lookup(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if neededBy == "" {
				return &hint.Error{Err: fmt.Errorf("%s is in none of the packages pinned for %s", p, r.arch.goarch),
					Advice: "check the path (packages are read in the merged /usr layout) and internal/image/debs.in"}
			}
			return &MissingLibraryError{Library: p, NeededBy: neededBy, Arch: r.arch.goarch}
		}
		return err
	}
	if r.done[real] {
		return nil
	}
	r.done[real] = true
	r.tree.file(real, e.Mode, e.Data)
	r.used[e.pin.Package] = e.pin
	if !bytes.HasPrefix(e.Data, []byte(elf.ELFMAG)) {
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(e.Data))
	if err != nil {
		return fmt.Errorf("%s (%s): %w", real, e.pin.Package, err)
	}
	defer f.Close()
	if f.Machine != r.arch.machine {
		return fmt.Errorf("%s (%s) is for %s, not %s", real, e.pin.Package, f.Machine, r.arch.machine)
	}
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(prog.Open(), 4096))
		if err != nil {
			return fmt.Errorf("%s: interpreter: %w", real, err)
		}
		if err := r.install(string(bytes.TrimRight(b, "\x00")), real); err != nil {
			return err
		}
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: %w", real, err)
	}
	var dirs []string
	runpath, _ := f.DynString(elf.DT_RUNPATH)
	if len(runpath) == 0 {
		runpath, _ = f.DynString(elf.DT_RPATH)
	}
	for _, rp := range runpath {
		for _, d := range strings.Split(rp, ":") {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", path.Dir(p))
			if path.IsAbs(d) {
				dirs = append(dirs, mergedUsr(path.Clean(d)))
			}
		}
	}
	// The loader's default directories on Debian, merged into /usr.
	dirs = append(dirs, "/usr/lib/"+r.arch.triplet, "/usr/lib")
	for _, lib := range needed {
		if strings.Contains(lib, "/") {
			return fmt.Errorf("%s needs %q: a path, not a library name", real, lib)
		}
		found := ""
		for _, d := range dirs {
			if _, _, err := r.lookup(path.Join(d, lib)); err == nil {
				found = path.Join(d, lib)
				break
			}
		}
		if found == "" {
			return &MissingLibraryError{Library: lib, NeededBy: real, Arch: r.arch.goarch}
		}
		if err := r.install(found, real); err != nil {
			return err
		}
	}
	return nil
}

// tree is a layer's content, written sorted with fixed metadata.
type tree struct {
	entries map[string]*tar.Header
	data    map[string][]byte
}

func newTree() *tree { return &tree{entries: map[string]*tar.Header{}, data: map[string][]byte{}} }

func (t *tree) parents(p string) {
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		if _, ok := t.entries[d]; !ok {
			t.entries[d] = &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755}
		}
	}
}

func (t *tree) dir(p string, mode int64) {
	t.parents(p)
	t.entries[p] = &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(p, "/") + "/", Mode: mode}
}

func (t *tree) file(p string, mode int64, b []byte) {
	t.parents(p)
	t.entries[p] = &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: mode, Size: int64(len(b))}
	t.data[p] = b
}

func (t *tree) link(p, target string) {
	t.parents(p)
	t.entries[p] = &tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(p, "/"), Linkname: target, Mode: 0o777}
}

func (t *tree) hasPrefix(prefix string) bool {
	for p := range t.entries {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

func (t *tree) names() []string {
	out := make([]string, 0, len(t.entries))
	for p, h := range t.entries {
		if h.Typeflag != tar.TypeDir {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (t *tree) tar() ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range sortedKeys(t.entries) {
		h := *t.entries[n]
		h.ModTime = epoch
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			return nil, err
		}
		if b, ok := t.data[n]; ok {
			if _, err := tw.Write(b); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseRef checks an image reference: a tag, never latest.
func ParseRef(ref string) (name.Tag, error) {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return name.Tag{}, &hint.Error{Err: fmt.Errorf("image reference %q: %w", ref, err), Advice: "give a reference with a pinned tag, e.g. " + Reference("0.1.0")}
	}
	if tag.TagStr() == "latest" {
		return name.Tag{}, &hint.Error{Err: errors.New("refusing the tag latest"), Advice: "pin the version: the tag is the iolens version"}
	}
	return tag, nil
}

// WriteDockerArchive writes img as a docker-archive tarball tagged ref
// (for 'docker load' and 'ctr images import'), atomically.
func WriteDockerArchive(img v1.Image, ref, out string) error {
	tag, err := ParseRef(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return os.Rename(tmp, out)
}

// AnnotationRefName is the OCI layout annotation that names a manifest.
const AnnotationRefName = "org.opencontainers.image.ref.name"

// Index puts one image per architecture into an OCI image index.
func Index(imgs map[string]v1.Image) (v1.ImageIndex, error) {
	var adds []mutate.IndexAddendum
	for _, a := range sortedKeys(imgs) {
		p := &v1.Platform{OS: "linux", Architecture: a}
		if a == "arm64" {
			p.Variant = "v8"
		}
		adds = append(adds, mutate.IndexAddendum{Add: imgs[a], Descriptor: v1.Descriptor{Platform: p}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return idx, nil
}

// WriteLayout writes idx as an OCI image layout in dir (which must not
// exist yet, or be empty), its top-level index naming it with ref's tag, so
// that registry tools can copy it (e.g. 'skopeo copy --all
// oci:DIR:TAG docker://REF').
func WriteLayout(idx v1.ImageIndex, ref, dir string) error {
	tag, err := ParseRef(ref)
	if err != nil {
		return err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return &hint.Error{Err: fmt.Errorf("%s is not empty", dir), Advice: "remove it first (make clean-dist)"}
	}
	p, err := layout.Write(dir, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{AnnotationRefName: tag.TagStr()}))
}
