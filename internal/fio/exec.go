package fio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NotInstalledError means fio could not be found: a name was looked for
// in PATH, a path (with a '/') was taken as it is.
type NotInstalledError struct{ Binary string }

func (e *NotInstalledError) Error() string {
	if strings.Contains(e.Binary, "/") {
		if fi, err := os.Stat(e.Binary); err != nil {
			return fmt.Sprintf("fio not found: %s does not exist", e.Binary)
		} else if fi.IsDir() {
			return fmt.Sprintf("fio not found: %s is a directory", e.Binary)
		}
		return fmt.Sprintf("fio not found: %s is not an executable file", e.Binary)
	}
	return fmt.Sprintf("fio not found (looked for %q in PATH)", e.Binary)
}

// Hint says how to get fio.
func (e *NotInstalledError) Hint() string {
	if strings.Contains(e.Binary, "/") {
		return "check the path given with --fio ('command -v fio' prints where fio is), or leave --fio out to use the fio in PATH"
	}
	return "install fio: 'apt-get install fio' (Debian/Ubuntu), 'dnf install fio' (Fedora/RHEL), or pass --fio PATH"
}

// Version runs "fio --version" and returns e.g. "fio-3.33".
func Version(ctx context.Context, binary string) (string, error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return "", &NotInstalledError{Binary: binary}
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Command is one fio invocation.
type Command struct {
	Binary string
	// Prefix runs fio through another command, such as one that places it
	// in a throttled cgroup.
	Prefix []string
	Args   []string
	Dir    string
	// OnStatus receives every status-interval document as fio prints it
	// (cumulative figures since the job started).
	OnStatus func(*Output)
	// Stderr, if set, receives fio's stderr as it is written.
	Stderr io.Writer
	// GracePeriod is how long fio gets to write its report after an
	// interrupt before it is killed.
	GracePeriod time.Duration
}

// Run holds what one fio invocation produced.
type Run struct {
	// Final is the last JSON document (fio's end-of-run report).
	Final       *Output
	Diagnostics []string
	Stderr      string
	ExitCode    int
	Interrupted bool
}

// ExitError is a non-zero exit from fio.
type ExitError struct {
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 && len(msg) > 2000 {
		msg = "..." + msg[i:]
	}
	if msg == "" {
		return fmt.Sprintf("fio exited with status %d", e.Code)
	}
	return fmt.Sprintf("fio exited with status %d: %s", e.Code, msg)
}

// Exec runs fio. When ctx is cancelled fio gets SIGINT, which makes it stop
// its jobs and still print its report; after GracePeriod it is killed. The
// returned Run is filled as far as fio got, even with an error.
func (c Command) Exec(ctx context.Context) (*Run, error) {
	bin := c.Binary
	if bin == "" {
		bin = "fio"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, &NotInstalledError{Binary: bin}
	}
	argv := append(append(append([]string{}, c.Prefix...), path), c.Args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	// fio gets its own process group so a terminal's Ctrl-C reaches iolens
	// first; iolens forwards it and keeps the report.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, c.Stderr)
	} else {
		cmd.Stderr = &stderr
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting fio: %w", err)
	}

	run := &Run{}
	var lastDoc []byte
	var decodeErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var sp Splitter
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		for sc.Scan() {
			doc, diag := sp.Line(sc.Text())
			if diag != "" {
				run.Diagnostics = append(run.Diagnostics, diag)
			}
			if doc == nil {
				continue
			}
			lastDoc = doc
			if c.OnStatus != nil {
				if o, err := Decode(doc); err == nil {
					c.OnStatus(o)
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()

	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			run.Interrupted = true
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			grace := c.GracePeriod
			if grace == 0 {
				grace = 15 * time.Second
			}
			select {
			case <-time.After(grace):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			case <-done:
			}
		case <-done:
		}
	}()
	wg.Wait()
	waitErr := cmd.Wait()
	close(done)

	run.Stderr = stderr.String()
	if lastDoc != nil {
		run.Final, decodeErr = Decode(lastDoc)
	}
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		run.ExitCode = ee.ExitCode()
		if run.ExitCode < 0 {
			run.ExitCode = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	default:
		return run, fmt.Errorf("waiting for fio: %w", waitErr)
	}
	if decodeErr != nil {
		return run, decodeErr
	}
	// fio exits non-zero after an interrupt but still writes a full report
	// of what it measured up to then.
	if run.ExitCode != 0 && !(run.Interrupted && run.Final != nil) {
		return run, &ExitError{Code: run.ExitCode, Stderr: run.Stderr}
	}
	if run.Final == nil {
		return run, fmt.Errorf("fio printed no JSON report: %w", ErrNoDocument)
	}
	return run, nil
}
