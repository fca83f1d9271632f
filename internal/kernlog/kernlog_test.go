package kernlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Records of the kernel's log as /dev/kmsg gives them: only those at or
// after the moment, naming the device as a word (loop70 is not loop7) and
// an error, counted; continuation lines and malformed records dropped.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		devices []string
		since   uint64
		count   int
		first   string
	}{
		{[]string{"loop7"}, 0, 3, "I/O error, dev loop7, sector 133120"},
		{[]string{"loop7"}, 10e6, 2, "I/O error, dev loop7, sector 133128"},
		{[]string{"loop7", "vda"}, 13e6, 0, ""},
		{[]string{"sdb"}, 0, 1, "critical medium error, dev sdb"},
		{[]string{"loop7; rm -rf"}, 0, 0, ""},
		{nil, 0, 0, ""},
	} {
		f, err := os.Open("testdata/kmsg")
		if err != nil {
			t.Fatal(err)
		}
		got, err := scan(strings.NewReader(mustRead(t, f)), c.devices, c.since)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != c.count || len(got.Lines) != min(c.count, maxLines) || c.first != "" && !strings.HasPrefix(got.Lines[0], c.first) {
			t.Errorf("%v since %d: %d %q, want %d starting %q", c.devices, c.since, got.Count, got.Lines, c.count, c.first)
		}
	}
}

func mustRead(t *testing.T, f *os.File) string {
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A SCSI disk's ioerr_cnt (hex, as the kernel writes it), read for the
// disk and for its partition; none for a device without one.
func TestIOErrCount(t *testing.T) {
	sys := t.TempDir()
	disk := filepath.Join(sys, "devices", "pci0", "host2", "block", "sdb")
	for _, d := range []string{filepath.Join(disk, "device"), filepath.Join(disk, "sdb1"), filepath.Join(sys, "class", "block"), filepath.Join(sys, "devices", "virtual", "block", "loop7")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(disk, "device", "ioerr_cnt"), []byte("0x1a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"sdb": disk, "sdb1": filepath.Join(disk, "sdb1"), "loop7": filepath.Join(sys, "devices", "virtual", "block", "loop7")} {
		if err := os.Symlink(target, filepath.Join(sys, "class", "block", name)); err != nil {
			t.Fatal(err)
		}
	}
	fs := FS{Sys: sys}
	for _, c := range []struct {
		name string
		n    uint64
		ok   bool
	}{{"sdb", 26, true}, {"sdb1", 26, true}, {"loop7", 0, false}, {"../sdb", 0, false}, {"nope", 0, false}} {
		n, ok := fs.IOErrCount(c.name)
		if n != c.n || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.name, n, ok, c.n, c.ok)
		}
	}
}

// The host's own log, when this process may read it: no error either way
// but permission.
func TestErrorsHost(t *testing.T) {
	if _, err := (FS{}).Errors([]string{"loop0"}, Now()); err != nil && !os.IsPermission(err) && !os.IsNotExist(err) {
		t.Errorf("reading the host's kernel log: %v", err)
	}
}
