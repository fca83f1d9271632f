package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestParseLdd(t *testing.T) {
	out := `	linux-vdso.so.1 (0x00007ffc8e1f2000)
	libaio.so.1 => /lib/x86_64-linux-gnu/libaio.so.1 (0x00007f2c1e4a0000)
	libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f2c1e480000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f2c1e5f0000)
`
	got := strings.Join(ParseLdd(out), " ")
	want := "/lib/x86_64-linux-gnu/libaio.so.1 /lib/x86_64-linux-gnu/libz.so.1 /lib64/ld-linux-x86-64.so.2"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestBuildReproducibleAndPinned(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Ref: "example.com/iolens:1.2.3", Files: []File{{Src: bin, Dst: "/usr/local/bin/tool"}},
		Dirs: []string{"/tmp", "/data"}, Entrypoint: []string{"/usr/local/bin/tool"}, Passwd: []string{"root:x:0:0::/:/bin/sh"}}
	ctx := context.Background()
	a, err := Build(ctx, spec, filepath.Join(dir, "a.tar"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(ctx, spec, filepath.Join(dir, "b.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("digests differ: %s %s", a, b)
	}
	tag, _ := name.NewTag("example.com/iolens:1.2.3")
	img, err := tarball.ImageFromPath(filepath.Join(dir, "a.tar"), &tag)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	if len(layers) != 1 {
		t.Fatalf("%d layers", len(layers))
	}
	rc, _ := layers[0].Uncompressed()
	tr := tar.NewReader(rc)
	files := map[string]tar.Header{}
	var content []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = *h
		if h.Name == "usr/local/bin/tool" {
			content, _ = io.ReadAll(tr)
		}
	}
	if !bytes.Contains(content, []byte("echo hi")) || files["usr/local/bin/tool"].Mode != 0o755 {
		t.Errorf("tool missing or wrong: %v", files["usr/local/bin/tool"])
	}
	if files["tmp/"].Mode != 0o1777 {
		t.Errorf("/tmp mode %o", files["tmp/"].Mode)
	}
	cf, _ := img.ConfigFile()
	if cf.Config.Entrypoint[0] != "/usr/local/bin/tool" {
		t.Errorf("entrypoint %v", cf.Config.Entrypoint)
	}
	spec.Ref = "example.com/iolens:latest"
	if _, err := Build(ctx, spec, filepath.Join(dir, "c.tar")); err == nil {
		t.Error("latest accepted")
	}
}
