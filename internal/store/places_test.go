package store

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 27.10: a database path that is a device is refused before SQLite
// opens it, so nothing is written beside it (--db /dev/null left
// /dev/null-journal). The node is the test's own, never the real one.
func TestDatabaseOnADevice(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot make a device node (needs root): %v", err)
	}
	for _, o := range []Options{{}, {ReadOnly: true}, {MustExist: true}} {
		s, err := OpenWith(context.Background(), null, o)
		if err == nil {
			s.Close()
			t.Errorf("%+v: opened a device as a database", o)
		} else if !strings.Contains(err.Error(), "character device") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if m, _ := filepath.Glob(null + "-*"); len(m) > 0 {
		t.Errorf("left %v beside the device", m)
	}
}

// Issue 27.10: a history on a read-only mount reads (it failed even for
// reads: SQLite could not make the files a WAL reader needs), and a write
// says why it cannot.
func TestReadOnlyMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a read-only bind mount needs root")
	}
	ctx := context.Background()
	src, ro := t.TempDir(), t.TempDir()
	w, err := Open(ctx, filepath.Join(src, "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Save(ctx, []result.Result{mkResult("20240501-120000-rorono", 1, nil, 100)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, args := range [][]string{{"--bind", src, ro}, {"-o", "remount,ro,bind", ro}} {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			exec.Command("umount", ro).Run()
			t.Skipf("mount %v: %v %s", args, err, out)
		}
	}
	defer func() {
		if out, err := exec.Command("umount", ro).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	}()
	s, err := OpenReadOnly(ctx, filepath.Join(ro, "h.db"))
	if err != nil {
		t.Fatalf("reading a history on a read-only mount: %v", err)
	}
	rs, err := s.Results(ctx, "20240501")
	runs, lerr := s.List(ctx, ListOptions{})
	s.Close()
	if err != nil || len(rs) != 1 || lerr != nil || len(runs) != 1 {
		t.Errorf("read %d results, %d runs: %v %v", len(rs), len(runs), err, lerr)
	}
	_, err = OpenDefault(ctx, filepath.Join(ro, "h.db"), Options{MustExist: true})
	var h interface{ Hint() string }
	if err == nil || !errors.As(err, &h) || !strings.Contains(h.Hint(), "read-only") {
		t.Errorf("writing on a read-only mount: %v", err)
	}
}

// Issue 34.6: on a full file system the history could not be read ("disk
// I/O error (4874)": SQLite cannot size its shared-memory file) and the
// message did not say the disk is full. Reading and writing there now say
// so, with what to do.
func TestFullFileSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	ctx := context.Background()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "iolens-full", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	defer func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	}()
	path := filepath.Join(dir, "h.db")
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Save(ctx, []result.Result{mkResult("20240501-120000-fullfs", 1, nil, 100)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Fill what is left.
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	for _, open := range []struct {
		name string
		f    func() (*Store, error)
	}{
		{"read", func() (*Store, error) { return OpenReadOnly(ctx, path) }},
		{"write", func() (*Store, error) { return Open(ctx, path) }},
	} {
		s, err := open.f()
		if open.name == "read" {
			// No WAL is left beside it: the file holds every run.
			if err != nil {
				t.Errorf("reading on a full disk: %v", err)
				continue
			}
			runs, lerr := s.List(ctx, ListOptions{})
			s.Close()
			if lerr != nil || len(runs) != 1 {
				t.Errorf("read: %d runs on a full disk: %v", len(runs), lerr)
			}
			continue
		}
		if err == nil {
			s.Close()
			t.Errorf("%s: opened on a full disk", open.name)
			continue
		}
		var full *DiskFullError
		if !errors.As(err, &full) || !strings.Contains(err.Error(), "full") || !strings.Contains(full.Hint(), "--db") {
			t.Errorf("%s on a full disk: %v; want a *DiskFullError saying the disk is full and what to do", open.name, err)
		}
	}
}
