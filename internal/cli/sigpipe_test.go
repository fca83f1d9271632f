package cli

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/iolens/iolens/internal/realio"
)

// Issue 34.4: piped to a reader that goes away (iolens run | head), run
// and diagnose were killed by SIGPIPE and left their scratch directory
// behind. Now a closed standard output ends the command as Ctrl-C does:
// no test starts after it, the target is cleaned up, and the status is
// 141 as for a process SIGPIPE ended. fio is a stand-in that prints a
// real output, so no IO is done.
func TestBrokenPipeCleansUp(t *testing.T) {
	realio.Long(t, "runs iolens as a process")
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fio := stubFio(t, "echo x >> '"+calls+"'; sleep 0.3")
	job := filepath.Join(dir, "j.fio")
	var sections strings.Builder
	for _, s := range []string{"a", "b", "c", "d"} {
		sections.WriteString("[" + s + "]\nrw=randread\nbs=4k\nruntime=1\ntime_based=1\n")
	}
	os.WriteFile(job, []byte(sections.String()), 0o644)
	for _, c := range []struct {
		name string
		args []string
		// most is how many tests may start: run streams each result as it
		// completes, so it stops after the first; diagnose prints once, at
		// the end.
		most int
		// both sends standard error to the closed pipe too (2>&1 | head).
		both bool
	}{
		{"run", []string{"run", "--job", job, "--no-precondition", "-o", "ndjson"}, 2, false},
		{"diagnose", []string{"diagnose", "--no-metadata", "--budget", "1m"}, 1000, false},
		{"diagnose 2>&1", []string{"diagnose", "--no-metadata", "--budget", "1m"}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := filepath.Join(dir, strings.Fields(c.name)[0]+"-target")
			os.Remove(calls)
			args := append(c.args, target, "--create", "--fio", fio, "--size", "64M", "--db", filepath.Join(dir, "h.db"))
			cmd := iolensCmd(t, args...)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader is gone before the first line
			cmd.Stdout = w
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if c.both {
				cmd.Stderr = w
			}
			err = cmd.Run()
			w.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 141 || ee.ProcessState.String() == "signal: broken pipe" {
				t.Errorf("exit = %v, want status 141 (not death by the signal)\n%s", err, stderr.String())
			}
			if !c.both && !strings.Contains(stderr.String(), "standard output was closed") {
				t.Errorf("stderr does not say why it stopped:\n%s", stderr.String())
			}
			if ents, err := os.ReadDir(target); err == nil && len(ents) > 0 {
				t.Errorf("left in the target: %v", ents)
			}
			b, _ := os.ReadFile(calls)
			if n := strings.Count(string(b), "x"); n > c.most {
				t.Errorf("fio ran %d times after the reader went away", n)
			}
		})
	}
}

// A terminal that closes (SIGHUP) ended run and diagnose at once and
// left their scratch directory; it now stops them as Ctrl-C does.
func TestHangupCleansUp(t *testing.T) {
	realio.Long(t, "runs iolens as a process")
	dir := t.TempDir()
	job := filepath.Join(dir, "j.fio")
	os.WriteFile(job, []byte("[a]\nrw=randread\nbs=4k\nruntime=1\ntime_based\n[b]\nrw=randread\nbs=4k\nruntime=1\ntime_based\n"), 0o644)
	for _, args := range [][]string{{"run", "--job", job, "--no-precondition"}, {"diagnose", "--no-metadata", "--budget", "1m"}} {
		target := filepath.Join(dir, args[0]+"-target")
		cmd := iolensCmd(t, append(args, target, "--create", "--fio", stubFio(t, "sleep 1"), "--size", "64M", "--db", filepath.Join(dir, "h.db"))...)
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "started") {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGHUP)
		go func() {
			for sc.Scan() {
			}
		}()
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("%s: exit %v, want 130", args[0], err)
		}
		if ents, err := os.ReadDir(target); err == nil {
			t.Errorf("%s: target left with %v", args[0], ents)
		}
	}
}
