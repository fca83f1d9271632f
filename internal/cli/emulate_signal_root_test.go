package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
)

// cancelOnWrite is standard output that a signal interrupts as the new
// disk's description is written.
type cancelOnWrite struct {
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return c.buf.Write(p)
}

// Issue 34.4: a signal that came after create's last step, while it wrote
// the disk's description, ended iolens with status 130 and the disk left
// in place. An interrupted create now leaves nothing.
func TestEmulateCreateInterruptedAtTheEnd(t *testing.T) {
	realio.Capped(t, emulate.Unavailable())
	state := t.TempDir()
	t.Setenv("IOLENS_EMULATE_DIR", state)
	t.Setenv("IOLENS_TEST_MAIN", "1") // the controller daemon is this binary, as iolens
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnWrite{cancel: cancel}
	var errb bytes.Buffer
	cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errb})
	cmd.SetArgs([]string{"emulate", "create", "sigend", "--iops", "500", "--ram", "--size", "64MiB"})
	err := cmd.ExecuteContext(ctx)
	realio.Cleanup(t, func() { execute(t, "emulate", "rm", "--force", "sigend") })
	if code := ExitCode(err, ctx.Err() != nil, &errb); code != 130 {
		t.Errorf("exit %d, want 130: %s", code, errb.String())
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing left behind") {
		t.Errorf("error %v; want the interruption and that the disk was removed", err)
	}
	if ents, _ := os.ReadDir(state); len(ents) > 0 {
		t.Errorf("left in the state directory: %v", ents)
	}
}

// Issue 34.4: SIGINT or SIGTERM at any step of 'iolens emulate create'
// ends it with status 130 and removes everything it made: the state
// directory, the loop device, the mounts. The signal is sent as each step
// is announced on standard error.
func TestEmulateCreateSignalAtEveryStep(t *testing.T) {
	realio.Capped(t, emulate.Unavailable())
	state := t.TempDir()
	for _, step := range []string{"state", "backing", "loop", "mkfs", "mount", "cgroup", "controller"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			name := "sig-" + step
			cmd := iolensCmd(t, "emulate", "--state-dir", state, "create", name, "--iops", "500", "--ram", "--size", "64MiB")
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sent := false
			var seen []string
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if !sent && strings.HasSuffix(sc.Text(), ": "+step) {
					cmd.Process.Signal(sig)
					sent = true
				}
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !sent || !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Errorf("%v at %s: signal sent %v, exit %v\n%s", sig, step, sent, err, strings.Join(seen, "\n"))
				execute(t, "emulate", "--state-dir", state, "rm", "--force", name)
			}
			if _, err := os.Stat(filepath.Join(state, name)); err == nil {
				t.Errorf("%v at %s: %s left", sig, step, filepath.Join(state, name))
				execute(t, "emulate", "--state-dir", state, "rm", "--force", name)
			}
			if b, _ := exec.Command("losetup", "-a").Output(); bytes.Contains(b, []byte(filepath.Join(state, name))) {
				t.Errorf("%v at %s: a loop device left:\n%s", sig, step, b)
			}
			if b, _ := os.ReadFile("/proc/self/mountinfo"); bytes.Contains(b, []byte(filepath.Join(state, name))) {
				t.Errorf("%v at %s: a mount left", sig, step)
			}
		}
	}
}
