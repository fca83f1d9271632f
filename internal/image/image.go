package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// File is one host file copied into the image.
type File struct {
	Src, Dst string
	// WithLibs adds the shared libraries the file loads (found with ldd).
	WithLibs bool
}

// Spec describes an image.
type Spec struct {
	// Ref is the image reference, with a pinned tag.
	Ref   string
	Files []File
	// Busybox, if set, is a static busybox binary installed as
	// /bin/busybox with the Applets linked to it.
	Busybox string
	Applets []string
	// Dirs are created empty (mode 01777 for /tmp, 0755 otherwise).
	Dirs       []string
	Entrypoint []string
	Env        []string
	// Passwd lines, so that tools that look up the uid find a name.
	Passwd []string
}

// DefaultApplets are the tools a local-path style provisioner's helper pod
// runs, plus a few for debugging.
var DefaultApplets = []string{"sh", "mkdir", "rm", "ls", "cat", "du", "df", "chmod", "sleep", "true"}

// epoch is the timestamp of every file, so the same inputs give the same
// image digest.
var epoch = time.Unix(0, 0)

// Build writes the image as a docker-archive tarball at out and returns its
// digest.
func Build(ctx context.Context, spec Spec, out string) (string, error) {
	ref, err := name.NewTag(spec.Ref, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", spec.Ref, err)
	}
	if ref.TagStr() == "latest" {
		return "", errors.New("refusing the tag latest: pin the version")
	}
	layerTar, err := rootfs(ctx, spec)
	if err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goarch()
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = spec.Entrypoint
	cf.Config.Env = spec.Env
	cf.Config.WorkingDir = "/"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	d, err := img.Digest()
	return d.String(), err
}

type entry struct {
	hdr  tar.Header
	data []byte
}

// rootfs builds the layer's tar: files, their libraries, busybox, dirs.
func rootfs(ctx context.Context, spec Spec) ([]byte, error) {
	entries := map[string]*entry{}
	addDir := func(p string, mode int64) {
		for d := p; d != "/" && d != "."; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				m := int64(0o755)
				if d == p {
					m = mode
				}
				entries[d] = &entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: m}}
			}
		}
	}
	addFile := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("image file: %w", err)
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		addDir(path.Dir(dst), 0o755)
		entries[dst] = &entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(dst, "/"), Mode: int64(st.Mode().Perm()), Size: int64(len(b))}, data: b}
		return nil
	}
	addLink := func(target, dst string) {
		addDir(path.Dir(dst), 0o755)
		entries[dst] = &entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(dst, "/"), Linkname: target, Mode: 0o777}}
	}
	for _, f := range spec.Files {
		if err := addFile(f.Src, f.Dst); err != nil {
			return nil, err
		}
		if !f.WithLibs {
			continue
		}
		libs, err := SharedLibs(ctx, f.Src)
		if err != nil {
			return nil, err
		}
		for _, l := range libs {
			real, err := filepath.EvalSymlinks(l)
			if err != nil {
				return nil, err
			}
			if err := addFile(real, l); err != nil {
				return nil, err
			}
		}
	}
	if spec.Busybox != "" {
		if err := addFile(spec.Busybox, "/bin/busybox"); err != nil {
			return nil, err
		}
		for _, a := range spec.Applets {
			addLink("busybox", "/bin/"+a)
		}
	}
	for _, d := range spec.Dirs {
		mode := int64(0o755)
		if d == "/tmp" {
			mode = 0o1777
		}
		addDir(d, mode)
	}
	if len(spec.Passwd) > 0 {
		b := []byte(strings.Join(spec.Passwd, "\n") + "\n")
		addDir("/etc", 0o755)
		entries["/etc/passwd"] = &entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644, Size: int64(len(b))}, data: b}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		e.hdr.ModTime = epoch
		e.hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, err
		}
		if e.data != nil {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var lddLine = regexp.MustCompile(`(?:=>\s+)?(/\S+)\s+\(0x`)

// SharedLibs lists the absolute paths of the libraries bin loads,
// including the dynamic loader, as ldd reports them.
func SharedLibs(ctx context.Context, bin string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		// A static binary makes ldd exit 1 with "not a dynamic executable".
		if strings.Contains(string(out), "not a dynamic") || strings.Contains(stderrOf(err), "not a dynamic") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %w", bin, err)
	}
	return ParseLdd(string(out)), nil
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// ParseLdd reads ldd's output.
func ParseLdd(out string) []string {
	var libs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if m := lddLine.FindStringSubmatch(sc.Text()); m != nil {
			libs = append(libs, m[1])
		}
	}
	return libs
}
