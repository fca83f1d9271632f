package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// ExitError is the exit status of a command Exec ran, for main to exit
// with: 128+N for a signal N, as a shell reports it.
type ExitError struct {
	Cmd  string
	Code int
}

func (e *ExitError) Error() string   { return fmt.Sprintf("%s exited with status %d", e.Cmd, e.Code) }
func (e *ExitError) ExitStatus() int { return e.Code }

// Exec runs argv in the disk's cgroup, so its IO is capped, with the
// disk's mount point in $IOLENS_EMULATE_MOUNT and its name in
// $IOLENS_EMULATE_NAME. A command that fails is an *ExitError.
func (d *Disk) Exec(argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	full := append(d.CommandPrefix(), argv...)
	c := exec.Command(full[0], full[1:]...)
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	c.Env = append(os.Environ(), "IOLENS_EMULATE_MOUNT="+d.Mount, "IOLENS_EMULATE_NAME="+d.Name)
	// No context: a terminal's Ctrl-C reaches the command itself, and it
	// decides when to stop; we wait for it.
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &ExitError{Cmd: argv[0], Code: code}
	}
	return err
}

// RemoveNamed destroys the emulated disks names, each whatever became of
// the others; with force it kills processes still in their cgroups. It
// returns the names removed.
func RemoveNamed(ctx context.Context, root string, names []string, force bool) (removed []string, err error) {
	var errs []error
	for _, name := range names {
		d, err := OpenForRemoval(root, name)
		if err == nil {
			if force {
				err = d.ForceDestroy(ctx)
			} else {
				err = d.Destroy(ctx)
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}
