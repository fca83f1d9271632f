package userfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f takes longer than a second: nothing here
// may block.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// devNode makes a character device node (major 1, minor) of its own as
// root, so that code under test, right or wrong, never touches the real
// one; else the real /dev/name, which a user cannot replace.
func devNode(t *testing.T, name string, minor int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err == nil {
		return p
	}
	if os.Geteuid() == 0 {
		t.Fatal("cannot make a device node as root")
	}
	return "/dev/" + name
}

func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	return p
}

func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "r.ndjson")
	os.WriteFile(reg, []byte("x"), 0o644)
	cases := map[string]string{fifo(t): "FIFO", dir: "directory", "/dev/zero": "character device", "/dev/null": "character device"}
	for p, k := range cases {
		within(t, "Open("+p+")", func() {
			_, err := Open(p)
			var nr *NotRegularError
			if !errors.As(err, &nr) || nr.Kind != k {
				t.Errorf("Open(%s) = %v, want a %s refused", p, err, k)
			}
		})
	}
	f, err := Open(reg)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestReadFileBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(p, make([]byte, 1000), 0o644)
	if b, err := ReadFile(p, 1000); err != nil || len(b) != 1000 {
		t.Errorf("ReadFile at its bound = %d, %v", len(b), err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(p, 999); !errors.As(err, &tl) {
		t.Errorf("ReadFile past its bound = %v, want *TooLargeError", err)
	}
	within(t, "ReadFile(/dev/zero)", func() {
		if _, err := ReadFile("/dev/zero", 1<<20); err == nil {
			t.Error("/dev/zero was read")
		}
	})
}

func TestReadAll(t *testing.T) {
	ctx := context.Background()
	b, err := ReadAll(ctx, strings.NewReader("[global]\n"), "stdin", 100, time.Second)
	if err != nil || string(b) != "[global]\n" {
		t.Errorf("ReadAll = %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadAll(ctx, strings.NewReader(strings.Repeat("x", 101)), "stdin", 100, 0); !errors.As(err, &tl) {
		t.Errorf("ReadAll past its bound = %v", err)
	}
	// A pipe that stays open and silent: the wait ends it.
	pr, pw := io.Pipe()
	defer pw.Close()
	var ni *NoInputError
	within(t, "ReadAll of a silent pipe", func() {
		if _, err := ReadAll(ctx, pr, "stdin", 100, 50*time.Millisecond); !errors.As(err, &ni) {
			t.Errorf("silent pipe: %v, want *NoInputError", err)
		}
	})
	// Ctrl-C ends it too.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	within(t, "ReadAll after Ctrl-C", func() {
		if _, err := ReadAll(cctx, pr, "stdin", 100, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
	})
}

func TestReaderEndsWithContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("abc"))
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, pr)
	p := make([]byte, 2)
	if n, err := r.Read(p); n != 2 || err != nil || string(p) != "ab" {
		t.Fatalf("Read = %d %q %v", n, p[:n], err)
	}
	if n, err := r.Read(p); n != 1 || err != nil || p[0] != 'c' {
		t.Fatalf("Read = %d %q %v, want what did not fit before", n, p[:n], err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	within(t, "a read after Ctrl-C", func() {
		if _, err := r.Read(p); !errors.Is(err, context.Canceled) {
			t.Errorf("Read after cancel = %v", err)
		}
	})
}

func TestOutputsRefuse(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.ndjson")
	db := filepath.Join(dir, "history.db")
	for _, p := range []string{in, db} {
		os.WriteFile(p, []byte("x"), 0o644)
	}
	hard := filepath.Join(dir, "hard.ndjson")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	os.Symlink(in, link)
	dangling := filepath.Join(dir, "dangling.html")
	os.Symlink(filepath.Join(dir, "nowhere", "x"), dangling)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	t.Chdir(dir)
	tests := []struct {
		path string
		want string // in the error
	}{
		{devNode(t, "null", 3), "character device"},
		{fifo(t), "FIFO"},
		{sub, "directory"},
		{dangling, "symbolic link to nothing"},
		{filepath.Join(dir, "missing", "x.html"), "does not exist"},
		{in, "is the input"},
		{"./r.ndjson", "is the input"},
		{"sub/../r.ndjson", "is the input"},
		{link, "is the input"},
		{hard, "is the input"},
		{db, "is the history database"},
		{"history.db", "is the history database"},
		{db + "-wal", "is the history database"},
	}
	for _, tt := range tests {
		var o Outputs
		o.Input("the input r.ndjson", in)
		o.Input("the history database", db)
		o.Input("the history database", db+"-wal")
		within(t, "Output("+tt.path+")", func() {
			err := o.Output("--html", tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Output(%s) = %v, want %q", tt.path, err, tt.want)
			}
		})
	}
	var o Outputs
	if err := o.Output("--out", "a.ndjson"); err != nil {
		t.Fatal(err)
	}
	err := o.Output("--html", "./a.ndjson")
	var ce *ClashError
	if !errors.As(err, &ce) || err.Error() != "--out and --html name the same file ./a.ndjson" {
		t.Errorf("two outputs on one file: %v", err)
	}
	if err := o.Output("--html", "a.html"); err != nil {
		t.Errorf("a new path: %v", err)
	}
	if err := o.Output("--out", "-"); err != nil {
		t.Errorf("standard output: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".iolens-*")); len(m) > 0 {
		t.Errorf("checks left %v", m)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "page.html")
	os.WriteFile(p, []byte("old"), 0o600)
	link := filepath.Join(dir, "latest.html")
	os.Symlink("page.html", link)
	if err := Write(link, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("the link's file holds %q", b)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
	boom := errors.New("boom")
	if err := Write(p, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed write = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("a failed write left %q", b)
	}
	null := devNode(t, "null", 3)
	for _, dev := range []string{null, devNode(t, "full", 7), fifo(t)} {
		within(t, "Write("+dev+")", func() {
			var nr *NotRegularError
			if err := Write(dev, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); !errors.As(err, &nr) {
				t.Errorf("Write(%s) = %v, want refused", dev, err)
			}
		})
	}
	if fi, err := os.Stat(null); err != nil || fi.Mode().IsRegular() {
		t.Errorf("%s is no longer a device: %v", null, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func TestAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.ndjson")
	for i := 0; i < 2; i++ {
		a, err := Append(p)
		if err != nil {
			t.Fatal(err)
		}
		a.Write([]byte("line\n"))
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "line\nline\n" {
		t.Errorf("appended %q", b)
	}
	for _, dev := range []string{devNode(t, "full", 7), devNode(t, "null", 3), fifo(t), filepath.Dir(p)} {
		within(t, "Append("+dev+")", func() {
			if a, err := Append(dev); err == nil {
				a.Close()
				t.Errorf("Append(%s) opened", dev)
			}
		})
	}
}

// Issue 34.1: a symbolic link another user planted in a sticky
// world-writable directory (/tmp) is refused by every output path, as the
// kernel's protected_symlinks refuses it; the caller's own link there, and
// any link in a private directory, is followed.
func TestPlantedLinkRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a link to another user")
	}
	dir := t.TempDir()
	shared := filepath.Join(dir, "tmp")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	const nobody = 65534
	planted := filepath.Join(shared, "out.html")
	os.Symlink(victim, planted)
	plantedDir := filepath.Join(shared, "d")
	os.Symlink(sub, plantedDir)
	for _, l := range []string{planted, plantedDir} {
		if err := os.Lchown(l, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	mine := filepath.Join(shared, "mine.html")
	os.Symlink(filepath.Join(dir, "mine-target"), mine)
	os.WriteFile(filepath.Join(dir, "mine-target"), []byte("x"), 0o644)
	private := filepath.Join(sub, "other.html")
	os.Symlink(filepath.Join(dir, "other-target"), private)
	os.Lchown(private, nobody, nobody)
	os.WriteFile(filepath.Join(dir, "other-target"), []byte("x"), 0o644)

	for _, p := range []string{planted, filepath.Join(plantedDir, "x.html")} {
		var o Outputs
		var pe *PlantedLinkError
		if err := o.Output("--html", p); !errors.As(err, &pe) {
			t.Errorf("Output(%s) = %v, want a planted link", p, err)
		}
		if err := Write(p, func(w io.Writer) error { _, err := io.WriteString(w, "page"); return err }); !errors.As(err, &pe) {
			t.Errorf("Write(%s) = %v, want a planted link", p, err)
		}
		if f, err := Append(p); !errors.As(err, &pe) {
			f.Close()
			t.Errorf("Append(%s) = %v, want a planted link", p, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(sub, "x.html")); err == nil {
		t.Error("a file was made through the planted directory link")
	}
	for _, p := range []string{mine, private} {
		var o Outputs
		if err := o.Output("--html", p); err != nil {
			t.Errorf("Output(%s) = %v, want it followed", p, err)
		}
		if err := Write(p, func(w io.Writer) error { _, err := io.WriteString(w, "page"); return err }); err != nil {
			t.Errorf("Write(%s) = %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine-target")); string(b) != "page" {
		t.Errorf("the caller's own link was not followed: %q", b)
	}
}
