package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// makeELF writes a minimal ELF64 shared object: enough for debug/elf (and
// so for the resolver) to read its machine, interpreter, DT_NEEDED and
// DT_RUNPATH. It is not executable.
func makeELF(t testing.TB, m elf.Machine, interp string, needed []string, runpath string) []byte {
	t.Helper()
	dynstr := []byte{0}
	str := func(s string) uint64 {
		off := uint64(len(dynstr))
		dynstr = append(append(dynstr, s...), 0)
		return off
	}
	var dyn []elf.Dyn64
	for _, n := range needed {
		dyn = append(dyn, elf.Dyn64{Tag: int64(elf.DT_NEEDED), Val: str(n)})
	}
	if runpath != "" {
		dyn = append(dyn, elf.Dyn64{Tag: int64(elf.DT_RUNPATH), Val: str(runpath)})
	}
	dyn = append(dyn, elf.Dyn64{Tag: int64(elf.DT_NULL)})
	shstr := []byte("\x00.dynstr\x00.dynamic\x00.shstrtab\x00")

	const ehsize, phsize, shsize = 64, 56, 64
	nph := 0
	if interp != "" {
		nph = 1
	}
	off := uint64(ehsize + nph*phsize)
	interpOff := off
	interpB := append([]byte(interp), 0)
	off += uint64(len(interpB))
	dynstrOff := off
	off += uint64(len(dynstr))
	off = (off + 7) &^ 7
	dynOff := off
	off += uint64(len(dyn) * 16)
	shstrOff := off
	off += uint64(len(shstr))
	off = (off + 7) &^ 7
	shoff := off

	var b bytes.Buffer
	hdr := elf.Header64{
		Type: uint16(elf.ET_DYN), Machine: uint16(m), Version: uint32(elf.EV_CURRENT),
		Phoff: ehsize, Shoff: shoff, Ehsize: ehsize, Phentsize: phsize, Phnum: uint16(nph),
		Shentsize: shsize, Shnum: 4, Shstrndx: 3,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	w := func(v any) {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	w(hdr)
	if interp != "" {
		w(elf.Prog64{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Off: interpOff, Filesz: uint64(len(interpB)), Memsz: uint64(len(interpB)), Align: 1})
	}
	b.Write(interpB)
	b.Write(dynstr)
	b.Write(make([]byte, int(dynOff)-b.Len()))
	w(dyn)
	b.Write(shstr)
	b.Write(make([]byte, int(shoff)-b.Len()))
	w(elf.Section64{})
	w(elf.Section64{Name: 1, Type: uint32(elf.SHT_STRTAB), Off: dynstrOff, Size: uint64(len(dynstr)), Addralign: 1})
	w(elf.Section64{Name: 9, Type: uint32(elf.SHT_DYNAMIC), Off: dynOff, Size: uint64(len(dyn) * 16), Link: 1, Addralign: 8, Entsize: 16})
	w(elf.Section64{Name: 18, Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstr)), Addralign: 1})
	return b.Bytes()
}

// tf is one entry of a test package's data.tar.
type tf struct {
	name, link string
	typ        byte
	data       []byte
}

// makeDeb writes a Debian package whose data.tar is compressed with comp
// ("gz", "xz", "zst" or "" for none).
func makeDeb(t testing.TB, comp string, files []tf) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: f.typ, Mode: 0o644, Linkname: f.link}
		switch f.typ {
		case tar.TypeReg:
			h.Size, h.Mode = int64(len(f.data)), 0o755
		case tar.TypeDir:
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if f.typ == tar.TypeReg {
			tw.Write(f.data)
		}
	}
	tw.Close()
	var data bytes.Buffer
	member := "data.tar"
	switch comp {
	case "gz":
		zw := gzip.NewWriter(&data)
		zw.Write(tb.Bytes())
		zw.Close()
	case "xz":
		zw, err := xz.NewWriter(&data)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(tb.Bytes())
		zw.Close()
	case "zst":
		zw, _ := zstd.NewWriter(&data)
		zw.Write(tb.Bytes())
		zw.Close()
	default:
		data.Write(tb.Bytes())
	}
	if comp != "" {
		member += "." + comp
	}
	var ar bytes.Buffer
	ar.WriteString("!<arch>\n")
	add := func(name string, b []byte) {
		fmt.Fprintf(&ar, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", "100644", len(b))
		ar.Write(b)
		if len(b)%2 == 1 {
			ar.WriteByte('\n')
		}
	}
	add("debian-binary", []byte("2.0\n"))
	add("control.tar.gz", []byte("x")) // odd length: exercises the padding
	add(member, data.Bytes())
	return ar.Bytes()
}

func TestReadDeb(t *testing.T) {
	files := []tf{
		{name: "./", typ: tar.TypeDir},
		{name: "./lib/x86_64-linux-gnu/", typ: tar.TypeDir},
		{name: "./lib/x86_64-linux-gnu/libaio.so.1.0.2", typ: tar.TypeReg, data: []byte("aio")},
		{name: "./lib/x86_64-linux-gnu/libaio.so.1", typ: tar.TypeSymlink, link: "libaio.so.1.0.2"},
		{name: "./lib64/ld-linux-x86-64.so.2", typ: tar.TypeSymlink, link: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
		{name: "./usr/bin/tool", typ: tar.TypeReg, data: []byte("tool")},
		{name: "./usr/bin/tool2", typ: tar.TypeLink, link: "./usr/bin/tool"},
		{name: "./usr/share/doc/x/copyright", typ: tar.TypeReg, data: []byte("doc")},
	}
	want := []string{
		"/usr/lib/x86_64-linux-gnu/libaio.so.1.0.2 reg aio",
		"/usr/lib/x86_64-linux-gnu/libaio.so.1 -> libaio.so.1.0.2",
		"/usr/lib64/ld-linux-x86-64.so.2 -> /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"/usr/bin/tool reg tool",
		"/usr/bin/tool2 reg tool",
	}
	for _, comp := range []string{"gz", "xz", "zst", ""} {
		t.Run("data.tar."+comp, func(t *testing.T) {
			got, err := readDeb(bytes.NewReader(makeDeb(t, comp, files)))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range got {
				switch f.Type {
				case tar.TypeReg:
					lines = append(lines, fmt.Sprintf("%s reg %s", f.Path, f.Data))
				case tar.TypeSymlink:
					lines = append(lines, f.Path+" -> "+f.Link)
				}
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestReadDebRefuses(t *testing.T) {
	good := makeDeb(t, "gz", []tf{{name: "./usr/bin/x", typ: tar.TypeReg, data: []byte("x")}})
	tests := []struct {
		name string
		deb  []byte
	}{
		{"empty", nil},
		{"not ar", []byte("PK\x03\x04 a zip file, not a package")},
		{"truncated", good[:len(good)/2]},
		{"no data member", good[:8+60+4]},
		{"climbs out", makeDeb(t, "gz", []tf{{name: "./../../etc/passwd", typ: tar.TypeReg, data: []byte("x")}})},
		{"hard link to nothing", makeDeb(t, "gz", []tf{{name: "./usr/bin/y", typ: tar.TypeLink, link: "./usr/bin/missing"}})},
		{"unknown compression", bytes.Replace(good, []byte("data.tar.gz "), []byte("data.tar.bz2"), 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := readDeb(bytes.NewReader(tc.deb)); !errors.Is(err, errBadDeb) {
				t.Errorf("got %v, want ErrBadDeb", err)
			}
		})
	}
}

func FuzzReadDeb(f *testing.F) {
	f.Add(makeDeb(f, "gz", []tf{{name: "./usr/bin/x", typ: tar.TypeReg, data: []byte("x")}, {name: "./lib/l", typ: tar.TypeSymlink, link: "/bin/x"}}))
	f.Add(makeDeb(f, "", []tf{{name: "./a", typ: tar.TypeReg, data: []byte("a")}, {name: "./b", typ: tar.TypeLink, link: "./a"}}))
	f.Add([]byte("!<arch>\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := readDeb(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, f := range files {
			if !strings.HasPrefix(f.Path, "/") || strings.Contains(f.Path, "..") {
				t.Fatalf("unsafe path %q", f.Path)
			}
		}
	})
}

func TestParseLock(t *testing.T) {
	const sum = "dc79dae895125512620fcd16465f1a19edec8f2d73736fe76a9fbf8195cfb745"
	good := "amd64 fio 3.33-3 537684 " + sum + " debian/pool/main/f/fio/fio_3.33-3_amd64.deb"
	tests := []struct {
		name, in string
		want     int
		bad      bool
	}{
		{"one", "# c\n\n" + good + "\n", 1, false},
		{"epoch in version", "arm64 busybox-static 1:1.35.0-4 10 " + sum + " debian/pool/main/b/busybox/busybox-static_1.35.0-4%2bdeb12u1_arm64.deb", 1, false},
		{"five fields", "amd64 fio 3.33-3 537684 " + sum, 0, true},
		{"short sum", "amd64 fio 3.33-3 537684 abcd debian/pool/fio.deb", 0, true},
		{"zero size", "amd64 fio 3.33-3 0 " + sum + " debian/pool/fio.deb", 0, true},
		{"absolute url", "amd64 fio 3.33-3 1 " + sum + " https://evil.example/fio.deb", 0, true},
		{"climbs", "amd64 fio 3.33-3 1 " + sum + " debian/../../fio.deb", 0, true},
		{"not a deb", "amd64 fio 3.33-3 1 " + sum + " debian/pool/fio.sh", 0, true},
		{"twice", good + "\n" + good, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pins, err := parseLock(strings.NewReader(tc.in))
			if (err != nil) != tc.bad {
				t.Fatalf("err = %v, want error %v", err, tc.bad)
			}
			if len(pins) != tc.want {
				t.Errorf("%d pins, want %d", len(pins), tc.want)
			}
		})
	}
	pins, _ := parseLock(strings.NewReader(good))
	if p := pins[0]; p.Arch != "amd64" || p.Package != "fio" || p.Version != "3.33-3" || p.Size != 537684 || p.SHA256 != sum {
		t.Errorf("got %+v", p)
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add(debsLock)
	f.Add("amd64 fio 1 1 00 x.deb\n")
	f.Fuzz(func(t *testing.T, s string) {
		pins, err := parseLock(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, p := range pins {
			if !validPoolPath(p.Path) || len(p.SHA256) != 64 || p.Size <= 0 {
				t.Fatalf("accepted %+v", p)
			}
		}
	})
}

// The committed lock file pins both architectures of every package in
// debs.in.
func TestLockCoversDebsIn(t *testing.T) {
	in, err := os.ReadFile("debs.in")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(in), "\n") {
		if l = strings.TrimSpace(strings.SplitN(l, "#", 2)[0]); l != "" {
			want = append(want, l)
		}
	}
	sort.Strings(want)
	arches, err := arches()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(arches, ",") != "amd64,arm64" {
		t.Errorf("arches %v", arches)
	}
	for _, a := range arches {
		pins, _ := pins(a)
		var got []string
		for _, p := range pins {
			got = append(got, p.Package)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: lock has %v, debs.in %v: run scripts/image-pins", a, got, want)
		}
	}
}

// synthDebs writes test packages for goarch: a dynamically linked "fio"
// with a library found through its RUNPATH that needs another one, a
// static "busybox", and a package with nothing the image needs.
func synthDebs(t testing.TB, dir, goarch string) []Deb {
	t.Helper()
	a, _ := archInfo(goarch)
	interp := map[string]string{"amd64": "/lib64/ld-linux-x86-64.so.2", "arm64": "/lib/ld-linux-aarch64.so.1"}[goarch]
	lib := "./lib/" + a.triplet + "/"
	pkgs := map[string][]tf{
		"fio": {
			{name: "./usr/bin/fio", typ: tar.TypeReg, data: makeELF(t, a.machine, interp, []string{"libaio.so.1", "libc.so.6", "libextra.so.2"}, "/usr/lib/"+a.triplet+"/extra")},
			{name: "./usr/share/doc/fio/README", typ: tar.TypeReg, data: []byte("doc")},
		},
		"libaio1": {
			{name: lib + "libaio.so.1.0.2", typ: tar.TypeReg, data: makeELF(t, a.machine, "", []string{"libc.so.6"}, "")},
			{name: lib + "libaio.so.1", typ: tar.TypeSymlink, link: "libaio.so.1.0.2"},
		},
		"libc6": {
			{name: lib + "libc.so.6", typ: tar.TypeReg, data: makeELF(t, a.machine, "", nil, "")},
			{name: lib + filepath.Base(interp), typ: tar.TypeReg, data: makeELF(t, a.machine, "", nil, "")},
			{name: "." + interp, typ: tar.TypeSymlink, link: "/lib/" + a.triplet + "/" + filepath.Base(interp)},
		},
		"libextra2": {
			{name: "./usr/lib/" + a.triplet + "/extra/libextra.so.2", typ: tar.TypeReg, data: makeELF(t, a.machine, "", []string{"libdeep.so.0"}, "")},
			{name: "./usr/lib/" + a.triplet + "/libdeep.so.0", typ: tar.TypeReg, data: makeELF(t, a.machine, "", nil, "")},
		},
		"busybox-static": {{name: "./bin/busybox", typ: tar.TypeReg, data: makeELF(t, a.machine, "", nil, "")}},
		"unrelated":      {{name: lib + "libunused.so.1", typ: tar.TypeReg, data: makeELF(t, a.machine, "", nil, "")}},
	}
	var debs []Deb
	for _, n := range sortedKeys(pkgs) {
		p := filepath.Join(dir, n+"_"+goarch+".deb")
		if err := os.WriteFile(p, makeDeb(t, "xz", pkgs[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		debs = append(debs, Deb{Pin: Pin{Arch: goarch, Package: n, Version: "1"}, Path: p})
	}
	return debs
}

// layerFiles lists every path of every layer of img (directories end in
// "/", symlinks show their target) and returns the contents of files.
func layerFiles(t testing.TB, img v1.Image) (map[string]string, map[string][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	paths, data := map[string]string{}, map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			p := "/" + strings.TrimSuffix(h.Name, "/")
			switch h.Typeflag {
			case tar.TypeSymlink:
				paths[p] = "-> " + h.Linkname
			case tar.TypeDir:
				paths[p] = fmt.Sprintf("dir %o", h.Mode)
			default:
				paths[p] = fmt.Sprintf("file %o", h.Mode)
				data[p], _ = io.ReadAll(tr)
			}
		}
		rc.Close()
	}
	return paths, data
}

func TestBuildAgentSynthetic(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, goarch := range []string{"amd64", "arm64"} {
		t.Run(goarch, func(t *testing.T) {
			a, _ := archInfo(goarch)
			iolens := filepath.Join(dir, "iolens-"+goarch)
			if err := os.WriteFile(iolens, makeELF(t, a.machine, "", nil, ""), 0o755); err != nil {
				t.Fatal(err)
			}
			debs := synthDebs(t, dir, goarch)
			b, err := Build(ctx, AgentSpec(goarch, iolens, "1.2.3", debs))
			if err != nil {
				t.Fatal(err)
			}
			paths, _ := layerFiles(t, b.Image)
			trip := "/usr/lib/" + a.triplet
			want := map[string]string{
				"/usr/local/bin/iolens":             "file 755",
				"/usr/bin/fio":                      "file 755",
				trip + "/libaio.so.1":               "-> libaio.so.1.0.2",
				trip + "/libaio.so.1.0.2":           "file 755",
				trip + "/libc.so.6":                 "file 755",
				trip + "/extra/libextra.so.2":       "file 755",
				trip + "/libdeep.so.0":              "file 755",
				"/usr/bin/busybox":                  "file 755",
				"/usr/bin/sh":                       "-> busybox",
				"/usr/bin/mkdir":                    "-> busybox",
				"/bin":                              "-> usr/bin",
				"/lib":                              "-> usr/lib",
				"/tmp":                              "dir 1777",
				"/data":                             "dir 755",
				"/etc/passwd":                       "file 644",
				"/usr/lib/" + a.triplet + "/extra/": "",
			}
			delete(want, "/usr/lib/"+a.triplet+"/extra/")
			if goarch == "amd64" {
				want["/lib64"] = "-> usr/lib64"
				want["/usr/lib64/ld-linux-x86-64.so.2"] = "-> /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
				want[trip+"/ld-linux-x86-64.so.2"] = "file 755"
			} else {
				want["/usr/lib/ld-linux-aarch64.so.1"] = "-> /usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
				want[trip+"/ld-linux-aarch64.so.1"] = "file 755"
			}
			for p, w := range want {
				if paths[p] != w {
					t.Errorf("%s: %q, want %q", p, paths[p], w)
				}
			}
			if goarch == "arm64" && paths["/lib64"] != "" {
				t.Errorf("arm64 has /lib64: %s", paths["/lib64"])
			}
			for _, absent := range []string{trip + "/libunused.so.1", "/usr/share/doc/fio/README"} {
				if _, ok := paths[absent]; ok {
					t.Errorf("%s is in the image", absent)
				}
			}
			var used []string
			for _, p := range b.Packages {
				used = append(used, p.Package)
			}
			if got := strings.Join(used, " "); got != "busybox-static fio libaio1 libc6 libextra2" {
				t.Errorf("packages used: %s", got)
			}
			cf, _ := b.Image.ConfigFile()
			if cf.Architecture != goarch || cf.OS != "linux" || cf.Config.Entrypoint[0] != "/usr/local/bin/iolens" || cf.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
				t.Errorf("config: %s/%s %v %v", cf.OS, cf.Architecture, cf.Config.Entrypoint, cf.Config.Labels)
			}
			if cf.Config.User != "" {
				t.Errorf("user %q: the pod spec sets it", cf.Config.User)
			}
		})
	}
}

func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	debs := synthDebs(t, dir, "amd64")
	amd := filepath.Join(dir, "iolens-amd64")
	arm := filepath.Join(dir, "iolens-arm64")
	os.WriteFile(amd, makeELF(t, elf.EM_X86_64, "", nil, ""), 0o755)
	os.WriteFile(arm, makeELF(t, elf.EM_AARCH64, "", nil, ""), 0o755)
	without := func(pkg string) []Deb {
		var out []Deb
		for _, d := range debs {
			if d.Pin.Package != pkg {
				out = append(out, d)
			}
		}
		return out
	}

	_, err := Build(ctx, AgentSpec("amd64", amd, "1", without("libextra2")))
	var miss *MissingLibraryError
	if !errors.As(err, &miss) || miss.Library != "libextra.so.2" || miss.NeededBy != "/usr/bin/fio" {
		t.Errorf("without libextra2: %v", err)
	}
	if _, err := Build(ctx, AgentSpec("amd64", arm, "1", debs)); err == nil || !strings.Contains(err.Error(), "GOARCH=amd64") && !strings.Contains(err.Error(), "built for") {
		t.Errorf("arm64 iolens in the amd64 image: %v", err)
	}
	if _, err := Build(ctx, AgentSpec("arm64", arm, "1", debs)); err == nil {
		t.Error("amd64 packages in the arm64 image were accepted")
	}
	if _, err := Build(ctx, AgentSpec("s390x", amd, "1", debs)); err == nil {
		t.Error("s390x accepted")
	}
	b, err := Build(ctx, AgentSpec("amd64", amd, "1", debs))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"example.com/iolens:latest", "example.com/iolens", "Not A Ref"} {
		if err := WriteDockerArchive(b.Image, ref, filepath.Join(dir, "x.tar")); err == nil {
			t.Errorf("%s accepted", ref)
		}
	}
}

// Same inputs, same digests: each image, the index, and the layout's
// index.json; the docker-archive loads back with its tag.
func TestBuildReproducibleIndex(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	build := func() v1.ImageIndex {
		imgs := map[string]v1.Image{}
		for _, goarch := range []string{"arm64", "amd64"} {
			a, _ := archInfo(goarch)
			iolens := filepath.Join(dir, "iolens-"+goarch)
			os.WriteFile(iolens, makeELF(t, a.machine, "", nil, ""), 0o755)
			b, err := Build(ctx, AgentSpec(goarch, iolens, "1.2.3", synthDebs(t, t.TempDir(), goarch)))
			if err != nil {
				t.Fatal(err)
			}
			imgs[goarch] = b.Image
		}
		idx, err := Index(imgs)
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}
	i1, i2 := build(), build()
	d1, _ := i1.Digest()
	d2, _ := i2.Digest()
	if d1 != d2 {
		t.Fatalf("index digests differ: %s %s", d1, d2)
	}
	ref := "example.com/iolens:1.2.3"
	for _, out := range []string{"a", "b"} {
		if err := WriteLayout(i1, ref, filepath.Join(dir, out)); err != nil {
			t.Fatal(err)
		}
	}
	ja, _ := os.ReadFile(filepath.Join(dir, "a", "index.json"))
	jb, _ := os.ReadFile(filepath.Join(dir, "b", "index.json"))
	if !bytes.Equal(ja, jb) || !bytes.Contains(ja, []byte(`"1.2.3"`)) {
		t.Errorf("index.json differs or lacks the tag:\n%s\n%s", ja, jb)
	}
	if err := WriteLayout(i1, ref, filepath.Join(dir, "a")); err == nil {
		t.Error("wrote into a non-empty layout")
	}

	// Read back: one index with both platforms.
	lp, err := layout.FromPath(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := lp.ImageIndex()
	tm, _ := top.IndexManifest()
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations[AnnotationRefName] != "1.2.3" {
		t.Fatalf("top index: %+v", tm.Manifests)
	}
	inner, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := inner.IndexManifest()
	var plats []string
	for _, m := range im.Manifests {
		plats = append(plats, m.Platform.OS+"/"+m.Platform.Architecture)
		img, err := inner.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		paths, _ := layerFiles(t, img)
		if paths["/usr/bin/fio"] == "" || paths["/usr/local/bin/iolens"] == "" || paths["/usr/bin/busybox"] == "" {
			t.Errorf("%s: incomplete image", m.Platform.Architecture)
		}
	}
	if got := strings.Join(plats, " "); got != "linux/amd64 linux/arm64" {
		t.Errorf("platforms %s", got)
	}

	amd, _ := inner.Image(im.Manifests[0].Digest)
	tarPath := filepath.Join(dir, "amd64.tar")
	if err := WriteDockerArchive(amd, ref, tarPath); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(ref)
	back, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := back.ConfigName()
	da, _ := amd.ConfigName()
	if db != da {
		t.Errorf("docker-archive config %s, built %s", db, da)
	}
}

// The real agent image from the pinned packages, when 'make image-debs'
// (or make image/dist) has put them in the cache. It does not download.
func TestAgentImageFromPinnedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: unpacking ~60 packages per architecture takes a while")
	}
	cache, err := CacheDir()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	for _, goarch := range []string{"amd64", "arm64"} {
		t.Run(goarch, func(t *testing.T) {
			debs, err := CachedDebs(cache, goarch)
			if err != nil {
				t.Skipf("pinned packages not in %s (%v): 'make image-debs' downloads them", cache, err)
			}
			a, _ := archInfo(goarch)
			iolens := filepath.Join(dir, "iolens-"+goarch)
			os.WriteFile(iolens, makeELF(t, a.machine, "", nil, ""), 0o755)
			b, err := Build(ctx, AgentSpec(goarch, iolens, "1.2.3", debs))
			if err != nil {
				t.Fatal(err)
			}
			paths, data := layerFiles(t, b.Image)
			trip := "/usr/lib/" + a.triplet
			for _, p := range []string{"/usr/local/bin/iolens", "/usr/bin/fio", "/usr/bin/busybox", "/usr/bin/sh",
				trip + "/libaio.so.1", trip + "/libc.so.6", trip + "/libz.so.1", trip + "/librados.so.2", trip + "/ceph/libceph-common.so.2"} {
				if _, ok := paths[p]; !ok {
					t.Errorf("%s missing", p)
				}
			}
			// Every ELF file in the image is for the image's machine, and
			// busybox is static (no interpreter).
			for p, b := range data {
				if !bytes.HasPrefix(b, []byte(elf.ELFMAG)) {
					continue
				}
				f, err := elf.NewFile(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				if f.Machine != a.machine {
					t.Errorf("%s is %s", p, f.Machine)
				}
				if p == "/usr/bin/busybox" {
					for _, pr := range f.Progs {
						if pr.Type == elf.PT_INTERP {
							t.Error("busybox is not static")
						}
					}
				}
			}
			if len(b.Packages) < 10 {
				t.Errorf("only %d packages used", len(b.Packages))
			}
		})
	}
}
