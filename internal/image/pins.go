package image

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/hint"
)

// DefaultMirror is where the pinned packages are fetched from; any Debian
// mirror with the same pool layout works, since every file is checked
// against its pinned hash.
const DefaultMirror = "https://deb.debian.org"

// Pin is one Debian package at one version for one architecture, with the
// size and SHA-256 of its .deb as the signed archive index lists them.
type Pin struct {
	Arch    string `json:"arch"`
	Package string `json:"package"`
	Version string `json:"version"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	// Path is the file's path under the mirror's root
	// ("debian/pool/main/f/fio/fio_3.33-3_amd64.deb"), URL-escaped.
	Path string `json:"path"`
}

//go:embed debs.lock
var debsLock string

// pins are the packages the agent image is built from, for arch (a
// GOARCH: amd64 or arm64), from the lock file scripts/image-pins writes.
func pins(arch string) ([]Pin, error) {
	all, err := parseLock(strings.NewReader(debsLock))
	if err != nil {
		return nil, fmt.Errorf("debs.lock: %w", err)
	}
	var out []Pin
	for _, p := range all {
		if p.Arch == arch {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, &hint.Error{Err: fmt.Errorf("no packages pinned for %s", arch), Advice: "add the architecture to scripts/image-pins (ARCHES) and run it"}
	}
	return out, nil
}

// arches lists the architectures the lock file pins packages for.
func arches() ([]string, error) {
	all, err := parseLock(strings.NewReader(debsLock))
	if err != nil {
		return nil, fmt.Errorf("debs.lock: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range all {
		if !seen[p.Arch] {
			seen[p.Arch] = true
			out = append(out, p.Arch)
		}
	}
	sort.Strings(out)
	return out, nil
}

// parseLock reads a lock file: '#' comments and lines of
// "arch package version size sha256 path".
func parseLock(r io.Reader) ([]Pin, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	var pins []Pin
	seen := map[string]bool{}
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 6 {
			return nil, fmt.Errorf("line %d: want 6 fields (arch package version size sha256 path), got %d", n, len(f))
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || size <= 0 {
			return nil, fmt.Errorf("line %d: bad size %q", n, f[3])
		}
		if b, err := hex.DecodeString(f[4]); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("line %d: bad sha256 %q", n, f[4])
		}
		if !validPoolPath(f[5]) {
			return nil, fmt.Errorf("line %d: bad path %q (want a relative path ending in .deb)", n, f[5])
		}
		if key := f[0] + " " + f[1]; seen[key] {
			return nil, fmt.Errorf("line %d: %s pinned twice for %s", n, f[1], f[0])
		} else {
			seen[key] = true
		}
		pins = append(pins, Pin{Arch: f[0], Package: f[1], Version: f[2], Size: size, SHA256: strings.ToLower(f[4]), Path: f[5]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return pins, nil
}

func validPoolPath(p string) bool {
	if !strings.HasSuffix(p, ".deb") || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return false
		}
	}
	return true
}

// CacheDir is where fetched packages are kept: $IOLENS_CACHE, else the
// user's cache directory (~/.cache/iolens/debs), outside the repository.
func CacheDir() (string, error) {
	if d := os.Getenv("IOLENS_CACHE"); d != "" {
		return filepath.Join(d, "debs"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", &hint.Error{Err: err, Advice: "set IOLENS_CACHE to a directory for downloaded packages"}
	}
	return filepath.Join(d, "iolens", "debs"), nil
}

// cachedPath is where p is kept in cache: named by its hash, so a file
// there is the pinned one (Fetch checks it again anyway).
func cachedPath(cache string, p Pin) string {
	return filepath.Join(cache, p.SHA256+".deb")
}

// errChecksum is wrapped when a file does not match its pin.
var errChecksum = errors.New("checksum mismatch")

// fetch returns the path of p's .deb in cache, downloading it from mirror
// when it is not there yet. A download is written to a temporary file and
// renamed into place only once its size and SHA-256 match the pin.
func fetch(ctx context.Context, client *http.Client, mirror, cache string, p Pin) (string, error) {
	dst := cachedPath(cache, p)
	if err := verifyFile(dst, p); err == nil {
		return dst, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		// A damaged cache entry is replaced.
		os.Remove(dst)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	u := strings.TrimSuffix(mirror, "/") + "/" + p.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", &hint.Error{Err: fmt.Errorf("fetching %s %s (%s): %w", p.Package, p.Version, p.Arch, err),
			Advice: "check the network, or pass --mirror for a Debian mirror you can reach"}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := &hint.Error{Err: fmt.Errorf("fetching %s: %s", u, resp.Status)}
		if resp.StatusCode == http.StatusNotFound {
			e.Advice = fmt.Sprintf("the archive no longer has %s %s; run scripts/image-pins to pin the current versions, and commit internal/image/debs.lock", p.Package, p.Version)
		}
		return "", e
	}
	tmp, err := os.CreateTemp(cache, ".fetch-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	// One byte more than pinned, so an oversized body is caught without
	// reading all of it.
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, p.Size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", u, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != p.Size || got != p.SHA256 {
		return "", &hint.Error{Err: fmt.Errorf("%s: %w: got %d bytes sha256 %s, pinned %d bytes sha256 %s", u, errChecksum, n, got, p.Size, p.SHA256),
			Advice: "the mirror served another file; try again or another --mirror. Never edit debs.lock by hand to match"}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, nil
}

// verifyCached checks that p is in cache and matches its pin.
func verifyCached(cache string, p Pin) (string, error) {
	dst := cachedPath(cache, p)
	return dst, verifyFile(dst, p)
}

func verifyFile(name string, p Pin) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != p.Size || got != p.SHA256 {
		return fmt.Errorf("%s: %w", name, errChecksum)
	}
	return nil
}
