package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// A DIR that does not exist is refused, since a typo or a volume that is
// not mounted would measure the disk below; with Create it is made, and
// everything iolens made is removed afterwards, up to the first
// directory that was there. (A mistyped /nonexistent/dir once wrote 1
// GiB on the root disk and left /nonexistent behind.)
func TestMissingDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "no", "such", "dir")
	bin, calls := countingFio(t, "../fio/testdata/randread_4k_qd8.jsonplus.json")
	spec := t1()
	cfg := Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{spec}}, Dir: dir, FioBinary: bin, SizeBytes: 64 << 20, NoPrecondition: true, WritebackCap: -1}
	err := Run(context.Background(), cfg, func(result.Result) error { t.Error("a test ran"); return nil }, nil)
	var me *MissingDirError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), dir) || !strings.Contains(me.Hint(), "--create") {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("created: %v", ents)
	}
	if b, _ := os.ReadFile(calls); len(b) > 0 {
		t.Errorf("fio ran: %s", b)
	}

	cfg.Create = true
	ran := 0
	if err := Run(context.Background(), cfg, func(result.Result) error { ran++; return nil }, nil); err != nil || ran != 1 {
		t.Fatalf("with Create: %v, %d results", err, ran)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}

	// Something of someone else's put in a created directory stays, and
	// so does the directory that holds it.
	cfg.Dir = filepath.Join(base, "a", "b")
	err = Run(context.Background(), cfg, func(result.Result) error {
		return os.WriteFile(filepath.Join(base, "a", "theirs"), []byte("x"), 0o644)
	}, nil)
	if err != nil && !strings.Contains(err.Error(), filepath.Join(base, "a")) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "a", "theirs")); err != nil {
		t.Errorf("their file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "a", "b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("iolens's directory a/b left behind: %v", err)
	}

	// A file is not a directory.
	file := filepath.Join(base, "a", "theirs")
	cfg.Dir = file
	if err := Run(context.Background(), cfg, func(result.Result) error { return nil }, nil); err == nil || hintOf(err) == "" {
		t.Errorf("a file as DIR: %v", err)
	}
}

// A DIR on the root file system while another disk is mounted is said to
// be the root disk, in an event and on every result (the verdict reads
// it from there).
func TestRootDiskNamed(t *testing.T) {
	mnt, dev := loopFS(t)
	dir := t.TempDir()
	if !onRootFS(dir) {
		t.Skip("the test's temporary directory is not on the root file system")
	}
	bin, _ := countingFio(t, "../fio/testdata/randread_4k_qd8.jsonplus.json")
	var got []result.Result
	var events []string
	err := Run(context.Background(), Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{t1()}}, Dir: dir, FioBinary: bin, SizeBytes: 64 << 20, NoPrecondition: true, WritebackCap: -1},
		func(r result.Result) error { got = append(got, r); return nil },
		func(e Event) { events = append(events, e.Message) })
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Base(dev) + " at " + mnt
	if len(got) != 1 || !got[0].Target.RootDisk || !contains(got[0].Target.OtherDisks, other) {
		t.Fatalf("target %+v, want the root disk with %s among the others", got[0].Target, other)
	}
	if !strings.Contains(strings.Join(events, "\n"), "this is the root disk, "+got[0].Target.Device) {
		t.Errorf("events: %q", events)
	}
	if note := RootDisk(filepath.Join(dir, "not", "yet")); !strings.Contains(note, "root disk") || !strings.Contains(note, other) {
		t.Errorf("RootDisk of a directory to create = %q", note)
	}
	if note := RootDisk(mnt); note != "" {
		t.Errorf("RootDisk of the loop file system = %q", note)
	}
}
