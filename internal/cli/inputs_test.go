package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// executeWithin is execute that fails the test when the command blocks.
func executeWithin(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type res struct {
		out, err string
		code     int
	}
	ch := make(chan res, 1)
	go func() {
		o, e, c := execute(t, args...)
		ch <- res{o, e, c}
	}()
	select {
	case r := <-ch:
		return r.out, r.err, r.code
	case <-time.After(d):
		t.Fatalf("%v blocked for %s", args, d)
	}
	return "", "", 0
}

// Issue 27.6: every file read by name refuses a FIFO and a device without
// blocking, and a certificate is read within a bound (/dev/zero used to
// grow until the memory ran out).
func TestInputsByName(t *testing.T) {
	dir := t.TempDir()
	fifo := fifoAt(t, filepath.Join(dir, "fifo"))
	big := filepath.Join(dir, "big.crt")
	os.WriteFile(big, bytes.Repeat([]byte("A"), 2<<20), 0o644)
	run := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, nil)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"report", fifo}, "is a FIFO, not a regular file"},
		{[]string{"report", "/dev/zero"}, "is a character device"},
		{[]string{"report", dir}, "is a directory"},
		{[]string{"analyze", fifo}, "is a FIFO"},
		{[]string{"compare", run, fifo}, "is a FIFO"},
		{[]string{"history", "import", "--db", filepath.Join(dir, "h.db"), fifo}, "is a FIFO"},
		{[]string{"limits", "azure:P10", "--price-file", fifo}, "is a FIFO"},
		{[]string{"run", "--job", fifo, "--fio", "/nonexistent/fio", dir}, "not a regular file"},
		{[]string{"etcd", "http://127.0.0.1:1", "--cacert", "/dev/zero"}, "is a character device"},
		{[]string{"etcd", "http://127.0.0.1:1", "--cacert", fifo}, "is a FIFO"},
		{[]string{"etcd", "http://127.0.0.1:1", "--cacert", big}, "larger than 1 MiB"},
		{[]string{"etcd", "http://127.0.0.1:1", "--cert", "/dev/zero", "--key", big}, "is a character device"},
		{[]string{"watch", "--etcd", "http://127.0.0.1:1", "--etcd-cacert", "/dev/zero"}, "is a character device"},
	}
	for _, c := range cases {
		_, errOut, code := executeWithin(t, 10*time.Second, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "hint: ") {
			t.Errorf("%v: exit %d, %q; want %q with a hint", c.args, code, errOut, c.want)
		}
	}
}

// Issue 27.6: reading standard input gives up on Ctrl-C (it used to wait
// for the end of a pipe nobody closes, SIGINT or not).
func TestStdinHonoursInterrupt(t *testing.T) {
	for _, args := range [][]string{{"report", "-"}, {"analyze", "-"}, {"run", "--job", "-", t.TempDir()}} {
		cmd := iolensCmd(t, args...)
		w, err := cmd.StdinPipe() // held open, never written
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
				t.Errorf("%v: %v after SIGINT, want exit 130; %s", args, err, stderr.String())
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%v: still reading 5 s after SIGINT", args)
		}
		w.Close()
	}
}

// Issue 26.11: --job - reads the job file from standard input.
func TestJobFromStdin(t *testing.T) {
	dir := t.TempDir()
	run := func(stdin string, args ...string) (string, int) {
		var out, errb bytes.Buffer
		cmd := NewRootCommand(IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb})
		cmd.SetArgs(args)
		code := ExitCode(cmd.Execute(), false, &errb)
		return errb.String() + out.String(), code
	}
	// The job parses; the missing fio is the next thing said (and the
	// run's first line, which waits for the run to start, is not).
	out, code := run("[seq]\nrw=read\nbs=1m\n", "run", "--job", "-", "--fio", "/nonexistent/fio", "--no-save", dir)
	if code != 1 || strings.Contains(out, "suite job:stdin") || !strings.Contains(out, "fio not found") {
		t.Errorf("--job - with a job: exit %d\n%s", code, out)
	}
	out, code = run("[seq]\nrw=read\nexec_prerun=rm -rf /\n", "run", "--job", "-", "--fio", "/nonexistent/fio", "--no-save", dir)
	if code == 0 || !strings.Contains(out, "exec_prerun") || !strings.Contains(out, "stdin") {
		t.Errorf("--job - with a refused option: exit %d\n%s", code, out)
	}
	out, code = run(strings.Repeat("#", 2<<20), "run", "--job", "-", "--fio", "/nonexistent/fio", "--no-save", dir)
	if code == 0 || !strings.Contains(out, "larger than") {
		t.Errorf("--job - past the bound: exit %d\n%.300s", code, out)
	}
}
