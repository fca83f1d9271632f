package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
)

// CreateAndHand creates a disk that outlives the process (a spec it
// refuses is a *hint.UsageError): its
// controller and latency layer run as daemons of this binary, under the
// state root spec.Dir made absolute. hand then describes the disk to
// whoever asked for it. The disk is kept only when hand succeeds and ctx
// is still live by then; otherwise it is removed again, even after ctx
// is cancelled, so that an interrupted create never leaves one behind.
func CreateAndHand(ctx context.Context, spec Spec, progress Progress, hand func(*Disk) error) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the iolens binary for the controller: %w", err)
	}
	if spec.Dir, err = filepath.Abs(spec.Dir); err != nil {
		return err
	}
	spec.Executable = exe
	d, err := CreateWithProgress(ctx, spec, progress)
	switch {
	case errors.Is(err, ErrSpec):
		return hint.Usage(err, "see 'iolens emulate create --help'")
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w (nothing left behind)", err)
	case err != nil:
		return err
	}
	err = hand(d)
	// A signal that came after the last step, while the description was
	// handed over, still undoes the disk.
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	if err == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if rerr := d.ForceDestroy(cctx); rerr != nil {
		return errors.Join(err, fmt.Errorf("removing %s again: %w (remove it with 'iolens emulate rm %s')", d.Name, rerr, d.Name))
	}
	return fmt.Errorf("%w (disk %s removed again: nothing left behind)", err, d.Name)
}

// OpenUsable opens disk name under root and inspects it, refusing a disk
// that can run nothing: its mount or its cgroup is gone.
func OpenUsable(root, name string) (*Disk, Status, error) {
	d, err := OpenIn(root, name)
	if err != nil {
		return nil, Status{}, err
	}
	st := d.Status()
	if !st.Mounted || !st.CgroupOK {
		return nil, st, &hint.Error{Err: fmt.Errorf("emulated disk %q is broken: %s", name, strings.Join(st.Broken, ", ")),
			Advice: "remove it with 'iolens emulate rm " + name + "' and create it again"}
	}
	return d, st, nil
}

// ArmIn arms disk name under root (Disk.Arm). A disk with no cold blocks
// or faults to arm is a *hint.UsageError.
func ArmIn(root, name string) error {
	d, err := OpenIn(root, name)
	if err != nil {
		return err
	}
	if d.Spec.Cold == nil && d.Spec.Faults == nil {
		return hint.Usage(fmt.Errorf("emulated disk %q has no cold blocks or faults to arm", name),
			"create it with --cold-read, --read-errors or --down-every")
	}
	return d.Arm()
}

// Remove destroys the disks names under root, or every disk when names
// is empty (RemoveNamed, RemoveAll). Teardown runs to the end even after
// ctx is cancelled, for two minutes at most.
func Remove(ctx context.Context, root string, names []string, force bool) (removed []string, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if len(names) == 0 {
		return RemoveAll(ctx, root, force)
	}
	return RemoveNamed(ctx, root, names, force)
}

// CopyEventLog writes the disk's event log as it is stored: NDJSON.
func (d *Disk) CopyEventLog(w io.Writer) error {
	f, err := os.Open(d.EventLog)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// WriteEventLog writes the disk's event log as a table (WriteEvents).
func (d *Disk) WriteEventLog(w io.Writer) error {
	evs, err := d.Events()
	if err != nil {
		return err
	}
	return WriteEvents(w, evs)
}
