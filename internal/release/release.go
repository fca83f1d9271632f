package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
)

// semver is what krew accepts as a plugin version: v, three numbers, an
// optional pre-release and build metadata.
var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// checkVersion refuses a version a release cannot carry.
func checkVersion(v string) error {
	if !semver.MatchString(v) {
		return &hint.Error{Err: fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH[-PRE]", v),
			Advice: "tag the commit (git tag v0.2.0) or pass VERSION=v0.2.0; untagged builds get v0.0.0-g<commit>"}
	}
	return nil
}

// Member is one file of an archive: Src on disk, Name in the archive.
type Member struct {
	Src, Name string
	Mode      int64
}

// archive writes a gzipped tar of members with fixed owners and
// timestamps, in the given order, atomically, so the same inputs give the
// same bytes.
func archive(out string, members []Member, mtime time.Time) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return err
	}
	tw := tar.NewWriter(zw)
	for _, m := range members {
		b, err := os.ReadFile(m.Src)
		if err != nil {
			f.Close()
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: m.Name, Mode: m.Mode, Size: int64(len(b)),
			ModTime: mtime.UTC().Truncate(time.Second), Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// maxMember bounds what ReadArchive keeps of one file: release binaries
// are tens of MiB.
const maxMember = 512 << 20

// readArchive returns the files of a gzipped tar by name.
func readArchive(name string) (map[string][]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s: %s is not a regular file", name, h.Name)
		}
		if h.Size > maxMember {
			return nil, fmt.Errorf("%s: %s is larger than %d bytes", name, h.Name, maxMember)
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxMember))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[h.Name] = b
	}
}

// sha256File is the hex SHA-256 of a file.
func sha256File(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sumsFile is the checksum file's name, in sha256sum's format.
const sumsFile = "SHA256SUMS"

// writeSums writes SHA256SUMS in dir for the named files, sorted, in the
// format 'sha256sum -c' reads.
func writeSums(dir string, names []string) error {
	names = append([]string(nil), names...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		s, err := sha256File(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", s, n)
	}
	return os.WriteFile(filepath.Join(dir, sumsFile), []byte(b.String()), 0o644)
}

// parseSums reads a SHA256SUMS file: name to hex digest.
func parseSums(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			// sha256sum's binary mode marks the name with '*'.
			sum, name, ok = strings.Cut(line, " *")
		}
		if b, err := hex.DecodeString(sum); !ok || err != nil || len(b) != sha256.Size || name == "" {
			return nil, fmt.Errorf("%s line %d: want '<sha256>  <name>'", sumsFile, n)
		}
		if name != filepath.Base(name) || name == "." || name == ".." {
			return nil, fmt.Errorf("%s line %d: %q is not a file name in the directory", sumsFile, n, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s line %d: %s listed twice", sumsFile, n, name)
		}
		out[name] = strings.ToLower(sum)
	}
	return out, sc.Err()
}

// errMismatch is wrapped by every failed check.
var errMismatch = errors.New("release check failed")
