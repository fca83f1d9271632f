package emulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

type inprocController struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// counters are a block device's cumulative IO counters.
type counters struct {
	readIOs, readSectors, writeIOs, writeSectors uint64
}

// parseStat parses /sys/block/DEV/stat.
func parseStat(s string) (counters, error) {
	f := strings.Fields(s)
	if len(f) < 7 {
		return counters{}, fmt.Errorf("block stat: %d fields, want at least 7", len(f))
	}
	var v [7]uint64
	for _, i := range []int{0, 2, 4, 6} {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return counters{}, fmt.Errorf("block stat field %d: %w", i+1, err)
		}
		v[i] = n
	}
	return counters{readIOs: v[0], readSectors: v[2], writeIOs: v[4], writeSectors: v[6]}, nil
}

func usageBetween(a, b counters) Usage {
	d := func(x, y uint64) float64 {
		if y < x {
			return 0
		}
		return float64(y - x)
	}
	return Usage{
		ReadIOs: d(a.readIOs, b.readIOs), WriteIOs: d(a.writeIOs, b.writeIOs),
		ReadBytes: 512 * d(a.readSectors, b.readSectors), WriteBytes: 512 * d(a.writeSectors, b.writeSectors),
	}
}

// RunController runs the controller of the disk called name under root
// until ctx ends or the disk is destroyed. It is what the daemon started
// by Spec.ControllerCommand must call.
func RunController(ctx context.Context, root, name string) error {
	d, err := OpenIn(root, name)
	if err != nil {
		return err
	}
	return runController(ctx, d, nil)
}

func runController(ctx context.Context, d *Disk, ready chan<- error) (err error) {
	fail := func(err error) error {
		if ready != nil {
			ready <- err
		}
		return err
	}
	log, err := openEventLog(d.EventLog)
	if err != nil {
		return fail(fmt.Errorf("opening event log: %w", err))
	}
	defer log.Close()
	statPath := filepath.Join("/sys/block", filepath.Base(d.Device), "stat")
	read := func() (counters, error) {
		b, err := os.ReadFile(statPath)
		if err != nil {
			return counters{}, err
		}
		return parseStat(string(b))
	}
	prev, err := read()
	if err != nil {
		return fail(fmt.Errorf("reading %s: %w", statPath, err))
	}
	cg := d.cg()
	start := time.Now()
	m := NewModel(d.Spec, start)
	applied := m.Limits()
	if err := cg.set(d.MajMin, d.Spec.cgroupLimits(applied)); err != nil {
		return fail(err)
	}
	msg := fmt.Sprintf("cgroup v%d %s, device %s (%s)", d.CgroupVersion, d.Cgroup, d.Device, d.MajMin)
	if d.Spec.ThrottleAt == ThrottleDevice {
		msg += "; caps enforced inside the device, the cgroup has none"
	}
	ev := Event{Time: start, Event: EventStart, Scale: d.Spec.scale(), Message: msg}
	ev.setLimits(applied)
	if err := log.write(ev); err != nil {
		return fail(err)
	}
	if ready != nil {
		ready <- nil
	}
	why := "stopped"
	defer func() {
		ev := Event{Time: time.Now(), Event: EventStop, ElapsedS: time.Since(start).Seconds(), Message: why}
		ev.setLimits(applied)
		err = errors.Join(err, log.write(ev))
	}()
	writeStatus := func() {
		if b, err := json.Marshal(m.State()); err == nil {
			_ = writeAtomic(filepath.Join(d.Dir, statusName), b)
		}
	}
	writeStatus()
	tick := time.NewTicker(d.Spec.withDefaults().Tick)
	defer tick.Stop()
	lastStatus := start
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		now := time.Now()
		cur, err := read()
		if err != nil {
			why = "loop device gone"
			return nil
		}
		evs := m.Step(now, usageBetween(prev, cur))
		prev = cur
		if l := m.Limits(); l != applied {
			if err := cg.set(d.MajMin, d.Spec.cgroupLimits(l)); err != nil {
				if !cg.exists() {
					why = "cgroup gone"
					return nil
				}
				why = err.Error()
				return err
			}
			applied = l
		}
		for _, e := range evs {
			if err := log.write(e); err != nil {
				why = err.Error()
				return err
			}
		}
		if now.Sub(lastStatus) >= time.Second {
			lastStatus = now
			if _, err := os.Stat(filepath.Join(d.Dir, stateName)); err != nil {
				why = "state removed"
				return nil
			}
			writeStatus()
		}
	}
}

// startController runs the controller: as a daemon ("Spec.Executable
// emulate controller ..."), or in this process.
func (d *Disk) startController(ctx context.Context) error {
	if d.Spec.Executable == "" {
		cctx, cancel := context.WithCancel(context.Background())
		ic := &inprocController{cancel: cancel, done: make(chan struct{})}
		ready := make(chan error, 1)
		go func() {
			defer close(ic.done)
			ic.err = runController(cctx, d, ready)
		}()
		if err := <-ready; err != nil {
			cancel()
			<-ic.done
			return fmt.Errorf("controller: %w", err)
		}
		d.inproc = ic
		return nil
	}
	logf, err := openRegular(filepath.Join(d.Dir, controllerLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(d.Spec.Executable, daemonArgs("controller", d.root(), d.Name)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own session: the terminal's Ctrl-C does not reach it, and it
	// outlives the command that created it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	inheritNothing()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting controller: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reap it if it dies while we live
	d.ControllerPID = cmd.Process.Pid
	d.ControllerStart = procStart(d.ControllerPID)
	if err := d.save(); err != nil {
		return err
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		if evs, _ := ReadEventFile(d.EventLog); len(evs) > 0 && evs[0].Event == EventStart {
			return nil
		}
		select {
		case <-exited:
			tail := strings.TrimSpace(logTail(filepath.Join(d.Dir, controllerLog)))
			return fmt.Errorf("controller exited at start: %s", tail)
		case <-deadline.C:
			return errors.New("controller did not start within 10 s")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// controllerAlive says whether the recorded controller is running: that
// pid, started then, with the controller's command line for this disk.
func (d *Disk) controllerAlive() bool {
	return isDaemon(d.ControllerPID, d.ControllerStart, "controller", d.root(), d.Name)
}

// stopController ends the controller: SIGTERM, then SIGKILL after 5 s.
func (d *Disk) stopController(ctx context.Context) error {
	if ic := d.inproc; ic != nil {
		ic.cancel()
		<-ic.done
		d.inproc = nil
		return ic.err
	}
	return stopDaemon(ctx, d.ControllerPID, d.ControllerStart, "controller", d.root(), d.Name)
}

// stopDaemon ends a disk's daemon of kind: SIGTERM, then SIGKILL after
// 5 s. The signal goes through a pidfd opened before the daemon is
// checked (isDaemon), so it reaches that process and no other, even if
// the pid is reused meanwhile. A pid that is not the daemon is left alone.
func stopDaemon(ctx context.Context, pid int, start uint64, kind, root, name string) error {
	if pid <= 1 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil // gone
	}
	defer unix.Close(fd)
	if !isDaemon(pid, start, kind, root, name) {
		return nil
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0)
	deadline := time.Now().Add(5 * time.Second)
	for isDaemon(pid, start, kind, root, name) {
		if time.Now().After(deadline) {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			deadline = time.Now().Add(5 * time.Second)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
