package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fifoAt makes a FIFO at p, or skips.
func fifoAt(t *testing.T, p string) string {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	return p
}

// deviceAt makes a character device like /dev/null at p (root only), so
// that a test never risks the real one.
func deviceAt(t *testing.T, p string) (string, bool) {
	t.Helper()
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		return "", false
	}
	return p, true
}

// devFull is a device like /dev/full that a test may hand to code that
// could clobber it: a node of its own in dir as root (the real one would
// be replaced if the code under test were wrong), else /dev/full itself,
// which a user cannot replace.
func devFull(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "full")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(1<<8|7)); err == nil {
		return p
	}
	if os.Geteuid() == 0 {
		t.Fatal("cannot make a device node as root")
	}
	return "/dev/full"
}

func isKind(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatalf("%s is gone: %v", p, err)
	}
	if fi.Mode().Type() != mode {
		t.Errorf("%s is now %v, was %v", p, fi.Mode().Type(), mode)
	}
}

// Issue 27.2: outputs never clobber. A device or a FIFO given as an
// output is refused (a rename used to replace the node with a file), an
// output that is the input, the history database or another output is
// refused whatever the spelling, and nothing is written.
func TestOutputsNeverClobber(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db := filepath.Join(dir, "h.db")
	in := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, nil)
	if _, e, code := execute(t, "history", "import", "--db", db, in); code != 0 {
		t.Fatalf("import: %s", e)
	}
	orig, _ := os.ReadFile(in)
	origDB, _ := os.ReadFile(db)
	fifo := fifoAt(t, filepath.Join(dir, "fifo"))
	os.Symlink(in, filepath.Join(dir, "link.html"))
	os.Link(in, filepath.Join(dir, "hard.html"))
	base := filepath.Base(in)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"html on a FIFO", []string{"report", in, "--html", fifo}, "a FIFO, not a regular file"},
		{"out on a FIFO", []string{"report", in, "--out", fifo}, "a FIFO, not a regular file"},
		{"html on a directory", []string{"report", in, "--html", dir}, "a directory"},
		{"html over its input", []string{"report", in, "--html", in}, "is the input"},
		{"html over its input as ./", []string{"report", base, "--html", "./" + base}, "is the input"},
		{"html over its input through a link", []string{"report", in, "--html", "link.html"}, "is the input"},
		{"html over its input through a hard link", []string{"report", in, "--html", "hard.html"}, "is the input"},
		{"analyze out over its input", []string{"analyze", in, "--out", "./" + base}, "is the input"},
		{"out and html on one file", []string{"report", in, "--out", "s.ndjson", "--html", "./s.ndjson"}, "name the same file"},
		{"export over the history", []string{"history", "export", "--db", db, "20240501", "--out", db}, "is the history database"},
		{"export over the history's WAL", []string{"history", "export", "--db", db, "20240501", "--out", "./h.db-wal"}, "is the history database"},
		{"show over the history", []string{"history", "show", "--db", db, "20240501", "--out", "h.db"}, "is the history database"},
		{"prometheus over the history", []string{"export", "prometheus", "--db", db, "--out", db}, "is the history database"},
		{"compare html over an operand", []string{"compare", "--db", db, in, in, "--html", in}, "is the input"},
		{"compare html over the history", []string{"compare", "--db", db, in, in, "--html", db}, "is the history database"},
		{"watch out on a FIFO", []string{"watch", "--out", fifo, "--duration", "1s"}, "a FIFO"},
		{"run out over the history", []string{"run", "--db", db, "--out", db, "--fio", "/nonexistent/fio"}, "is the history database"},
		{"diagnose html over the history", []string{"diagnose", "--db", db, "--html", db, "--fio", "/nonexistent/fio"}, "is the history database"},
	}
	if dev, ok := deviceAt(t, filepath.Join(dir, "null")); ok {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"html on a device", []string{"report", in, "--html", dev}, "a character device"})
		defer isKind(t, dev, os.ModeDevice|os.ModeCharDevice)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := execute(t, c.args...)
			if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "hint: ") {
				t.Errorf("exit %d, stderr %q; want 2 and %q with a hint", code, errOut, c.want)
			}
			if out != "" {
				t.Errorf("wrote a report before refusing: %.100q", out)
			}
		})
	}
	isKind(t, fifo, os.ModeNamedPipe)
	if b, _ := os.ReadFile(in); !bytes.Equal(b, orig) {
		t.Error("the input changed")
	}
	if b, _ := os.ReadFile(db); !bytes.Equal(b, origDB) {
		t.Error("the history database changed")
	}
	if _, e, code := execute(t, "history", "show", "--db", db, "20240501"); code != 0 {
		t.Errorf("the saved run is gone: %s", e)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*iolens*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// Issue 27.2: a write that fails is a failure. /dev/full is no file, and
// standard output on a full device fails the command.
func TestWritesAreChecked(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	in := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, nil)
	if _, e, code := execute(t, "history", "import", "--db", db, in); code != 0 {
		t.Fatalf("import: %s", e)
	}
	devfull := devFull(t, dir)
	for _, args := range [][]string{
		{"report", in, "--out", devfull},
		{"history", "export", "--db", db, "20240501", "--out", devfull},
		{"export", "prometheus", "--db", db, "--out", devfull},
	} {
		if _, errOut, code := execute(t, args...); code == 0 || !strings.Contains(errOut, devfull) {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	isKind(t, devfull, os.ModeDevice|os.ModeCharDevice)
	full, err := os.OpenFile(devfull, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	// limits printed its table with writes whose errors nobody checked.
	for _, args := range [][]string{{"limits", "azure:P10"}, {"report", in}, {"history", "--db", db}, {"history", "export", "--db", db, "20240501"}} {
		cmd := iolensCmd(t, args...)
		cmd.Stdout = full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%v > /dev/full: %v, %q; want exit 1 and the write error", args, err, stderr.String())
		}
	}
}

// stubFio writes a stand-in for fio that prints a real fio json+ output
// for any job, after running before (a shell command).
func stubFio(t *testing.T, before string) string {
	t.Helper()
	fixture, err := filepath.Abs(filepath.Join("..", "fio", "testdata", "randread_4k_qd8.jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\n" + before + "\ncat '" + fixture + "'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Issue 26.3: outputs are checked before the IO, and a failure after the
// run still prints the report and names the saved run.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	job := filepath.Join(dir, "j.fio")
	os.WriteFile(job, []byte("[randread4k]\nrw=randread\nbs=4k\niodepth=8\nruntime=1\ntime_based=1\n"), 0o644)
	target := filepath.Join(dir, "target")
	for _, c := range []struct{ cmd, flag string }{{"run", "--html"}, {"run", "--out"}, {"diagnose", "--html"}, {"diagnose", "--out"}} {
		args := []string{c.cmd, target, "--create", "--fio", stubFio(t, "touch '"+filepath.Join(dir, "ran")+"'"), "--db", db,
			c.flag, filepath.Join(dir, "nodir", "r.html")}
		if c.cmd == "run" {
			args = append(args, "--job", job)
		}
		out, errOut, code := execute(t, args...)
		if code != 2 || !strings.Contains(errOut, "does not exist") || out != "" {
			t.Errorf("%s %s in a missing directory: exit %d, %q", c.cmd, c.flag, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Fatalf("%s ran fio before refusing %s", c.cmd, c.flag)
		}
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("%s made its target before refusing %s", c.cmd, c.flag)
		}
	}
	if _, errOut, code := execute(t, "diagnose", target, "--db", dir, "--fio", "/nonexistent/fio"); code == 0 || strings.Contains(errOut, "fio not found") {
		t.Errorf("diagnose with a history it cannot open: exit %d, %q; want the history's error first", code, errOut)
	}

	// The page's directory goes while fio runs.
	pages := filepath.Join(dir, "pages")
	os.Mkdir(pages, 0o755)
	out, errOut, code := execute(t, "run", target, "--create", "--job", job, "--fio", stubFio(t, "rm -rf '"+pages+"'"), "--db", db,
		"--html", filepath.Join(pages, "r.html"), "--no-precondition", "--size", "64M")
	if code != 1 || !strings.Contains(out, "randread4k") || !strings.Contains(out, "23413") {
		t.Fatalf("exit %d; the report is missing from standard output:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "--html") || !strings.Contains(errOut, "saved as run") || !strings.Contains(errOut, "'iolens history show ") {
		t.Errorf("the error does not say what failed and where the results are:\n%s", errOut)
	}
}
