package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Limits on what one package may unpack to. Pinned packages are checked
// against their hash before they are read, but the reader does not rely on
// it: a corrupt or hostile archive fails with an error instead of filling
// memory.
const (
	maxDebMember = 1 << 30 // one ar member (the compressed data.tar)
	maxDebData   = 1 << 30 // everything a package unpacks to
	maxDebFiles  = 100000
)

// DebFile is one entry of a package's data archive, its path absolute and
// already moved to the merged /usr layout (see mergedUsr).
type DebFile struct {
	Path string
	// Type is tar.TypeReg, tar.TypeSymlink or tar.TypeDir.
	Type byte
	Mode int64
	// Link is a symlink's target, moved like Path when absolute.
	Link string
	Data []byte
}

// errBadDeb is wrapped by every error about a malformed package.
var errBadDeb = errors.New("not a valid Debian package")

// readDeb unpacks the data archive of a Debian binary package (an ar
// archive holding debian-binary, control.tar.* and data.tar.*, compressed
// with gzip, xz, zstd or not at all). Documentation under /usr/share is
// skipped: the image needs programs and libraries only.
func readDeb(r io.Reader) ([]DebFile, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, 8)
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != "!<arch>\n" {
		return nil, fmt.Errorf("%w: no ar header", errBadDeb)
	}
	for {
		var hdr [60]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%w: no data.tar member", errBadDeb)
			}
			return nil, fmt.Errorf("%w: %v", errBadDeb, err)
		}
		if string(hdr[58:60]) != "`\n" {
			return nil, fmt.Errorf("%w: bad ar member header", errBadDeb)
		}
		name := strings.TrimSuffix(strings.TrimSpace(string(hdr[0:16])), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || size < 0 || size > maxDebMember {
			return nil, fmt.Errorf("%w: member %q has a bad size", errBadDeb, name)
		}
		body := io.LimitReader(br, size)
		if strings.HasPrefix(name, "data.tar") {
			return readDataTar(name, body)
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return nil, fmt.Errorf("%w: %v", errBadDeb, err)
		}
		if size%2 == 1 { // members are padded to an even offset
			if _, err := br.ReadByte(); err != nil {
				return nil, fmt.Errorf("%w: %v", errBadDeb, err)
			}
		}
	}
}

func readDataTar(member string, r io.Reader) ([]DebFile, error) {
	var dr io.Reader
	switch path.Ext(member) {
	case ".tar":
		dr = r
	case ".gz":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errBadDeb, member, err)
		}
		dr = zr
	case ".xz":
		zr, err := xz.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errBadDeb, member, err)
		}
		dr = zr
	case ".zst":
		zr, err := zstd.NewReader(r, zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errBadDeb, member, err)
		}
		defer zr.Close()
		dr = zr
	default:
		return nil, fmt.Errorf("%w: %s: unknown compression", errBadDeb, member)
	}
	tr := tar.NewReader(dr)
	var files []DebFile
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errBadDeb, member, err)
		}
		p, ok := cleanDebPath(h.Name)
		if !ok {
			return nil, fmt.Errorf("%w: %s: unsafe path %q", errBadDeb, member, h.Name)
		}
		if p == "/" || strings.HasPrefix(p, "/usr/share/") || p == "/usr/share" {
			continue
		}
		if len(files) >= maxDebFiles {
			return nil, fmt.Errorf("%w: %s: more than %d entries", errBadDeb, member, maxDebFiles)
		}
		f := DebFile{Path: mergedUsr(p), Mode: h.Mode & 0o7777}
		switch h.Typeflag {
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > maxDebData {
				return nil, fmt.Errorf("%w: %s: more than %d bytes", errBadDeb, member, maxDebData)
			}
			var buf bytes.Buffer
			if _, err := io.CopyN(&buf, tr, h.Size); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", errBadDeb, member, err)
			}
			total += h.Size
			f.Type, f.Data = tar.TypeReg, buf.Bytes()
		case tar.TypeSymlink:
			f.Type, f.Link = tar.TypeSymlink, h.Linkname
			if path.IsAbs(h.Linkname) {
				f.Link = mergedUsr(path.Clean(h.Linkname))
			}
		case tar.TypeDir:
			f.Type = tar.TypeDir
		case tar.TypeLink:
			// A hard link: the same content under a second name.
			t, ok := cleanDebPath(h.Linkname)
			if !ok {
				return nil, fmt.Errorf("%w: %s: unsafe link %q", errBadDeb, member, h.Linkname)
			}
			t = mergedUsr(t)
			found := false
			for i := len(files) - 1; i >= 0; i-- {
				if files[i].Path == t && files[i].Type == tar.TypeReg {
					f.Type, f.Data, found = tar.TypeReg, files[i].Data, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("%w: %s: hard link to missing %q", errBadDeb, member, h.Linkname)
			}
		default:
			continue // devices, fifos: nothing a library package ships
		}
		files = append(files, f)
	}
}

// cleanDebPath makes a tar entry name ("./usr/bin/fio") absolute and
// refuses names that climb out of the root.
func cleanDebPath(name string) (string, bool) {
	if name == "" || strings.Contains(name, "\x00") {
		return "", false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", false
		}
	}
	return path.Clean("/" + name), true
}

// mergedUsr moves a path to Debian's merged-/usr layout (/lib/x is
// /usr/lib/x, and so on), where the image's /bin, /sbin, /lib and /lib64
// are symlinks into /usr. Packages of older releases ship files under
// /lib and newer ones under /usr/lib; merged, both land in one place and
// the ELF interpreter's fixed path (/lib64/ld-linux-x86-64.so.2,
// /lib/ld-linux-aarch64.so.1) resolves through the symlinks.
func mergedUsr(p string) string {
	for _, d := range [...]string{"bin", "sbin", "lib", "lib64"} {
		if p == "/"+d || strings.HasPrefix(p, "/"+d+"/") {
			return "/usr" + p
		}
	}
	return p
}
