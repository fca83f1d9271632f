package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/iolens/iolens/internal/hint"
	"golang.org/x/sys/unix"
)

// The latency layer is a FUSE file system with one file, the disk's
// backing file, under the loop device. Each read, write and fsync waits
// out its drawn latency before it answers, counted from when the request
// reached the server, so no IO is answered sooner than configured. Every
// request is served on its own goroutine, and the kernel may keep
// fuseMaxBackground asynchronous direct IOs in flight, so a latency
// delays IOs without serialising them: QD32 still reaches a disk's IOPS
// cap. The device (device.go) adds what a disk does inside: a limit on
// how many IOs it serves at once, and a throttle that paces them. The
// backing file is read and written through the host's page
// cache and never synced to the host's disk: the emulated disk's speed is
// the configured latency and caps, not the host's (and it does not
// survive a host crash).

const (
	latencyMountName = "lat"
	latencyFileName  = "disk"
	latencyLog       = "latency.log"
	// fuseMaxBackground is how many asynchronous requests (the loop
	// device's direct IO) the kernel lets wait for the server at once.
	fuseMaxBackground = 256
	fuseMaxWrite      = 1 << 20
	fileNode          = 2
)

// latencyFS serves one file as the emulated device: with its latencies,
// channels and throttle.
type latencyFS struct {
	fuse.RawFileSystem
	f    *os.File
	size int64
	dev  *device
	// early is how much sooner than its latency a request may answer: 90%
	// of the least round trip through the kernel's FUSE path measured at
	// mount, which every IO pays on top of the wait. It keeps a 1 ms
	// latency near 1 ms as fio sees it, and never below it.
	early atomic.Int64
	// calibrating: requests answer at once while early is measured.
	calibrating atomic.Bool
	// media fails IO and slows cold blocks, once armed.
	media *media
	stop  chan struct{}
	// cpu is the CPU time each read and write costs the server
	// (Spec.ServerCPU).
	cpu time.Duration
}

// work spends the server's CPU time on one IO: its own thread's CPU
// time, not the wall clock's, so an IO that waits for a CPU (the host's
// CPUs all busy) is answered that much later, as a daemon's would be.
func (l *latencyFS) work() {
	if l.cpu <= 0 || l.calibrating.Load() {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return
	}
	end := ts.Nano() + int64(l.cpu)
	for unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) == nil && ts.Nano() < end {
	}
}

func (l *latencyFS) String() string { return "iolens-latency" }

// wait sleeps until the device answers an IO of kind k and size bytes
// that reached the layer at start. It sleeps in nanosleep on its own
// thread with the timer slack at its least: the Go runtime's timers and
// the default 50 µs slack each overshoot by more than a tenth of a
// millisecond, which would be a tenth of a 1 ms latency.
func (l *latencyFS) wait(k ioKind, size int, start time.Time) { l.waitMore(k, size, start, 0) }

// waitMore is wait, the answer later by extra.
func (l *latencyFS) waitMore(k ioKind, size int, start time.Time, extra time.Duration) {
	if l.calibrating.Load() {
		return
	}
	rest := time.Until(l.dev.schedule(k, size, start, time.Duration(l.early.Load()))) + extra
	if rest <= 0 {
		return
	}
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	ts := unix.NsecToTimespec(int64(rest))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

func (l *latencyFS) attr(node uint64, a *fuse.Attr) bool {
	now := uint64(time.Now().Unix())
	a.Atime, a.Mtime, a.Ctime = now, now, now
	a.Ino = node
	switch node {
	case fuse.FUSE_ROOT_ID:
		a.Mode, a.Nlink = syscall.S_IFDIR|0o700, 2
	case fileNode:
		a.Mode, a.Nlink, a.Size = syscall.S_IFREG|0o600, 1, uint64(l.size)
		a.Blocks = (a.Size + 511) / 512
		a.Blksize = 4096
	default:
		return false
	}
	return true
}

func (l *latencyFS) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	if h.NodeId != fuse.FUSE_ROOT_ID || name != latencyFileName {
		return fuse.ENOENT
	}
	out.NodeId, out.Generation = fileNode, 1
	out.SetEntryTimeout(time.Hour)
	out.SetAttrTimeout(time.Hour)
	l.attr(fileNode, &out.Attr)
	return fuse.OK
}

func (l *latencyFS) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	if !l.attr(in.NodeId, &out.Attr) {
		return fuse.ENOENT
	}
	out.SetTimeout(time.Hour)
	return fuse.OK
}

func (l *latencyFS) Open(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.NodeId != fileNode {
		return fuse.EISDIR
	}
	// Direct IO: no page cache of this file system between the loop
	// device and the server; parallel writes: no inode lock around them.
	out.OpenFlags = fuse.FOPEN_DIRECT_IO | fuse.FOPEN_PARALLEL_DIRECT_WRITES
	out.Fh = 1
	return fuse.OK
}

func (l *latencyFS) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	start := time.Now()
	if l.media.fails(ioRead, int64(in.Offset), int64(in.Size), start) {
		l.wait(ioRead, int(in.Size), start)
		return nil, fuse.EIO
	}
	n, err := l.f.ReadAt(buf[:min(int(in.Size), len(buf))], int64(in.Offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fuse.ToStatus(err)
	}
	l.work()
	l.waitMore(ioRead, int(in.Size), start, l.media.touch(ioRead, int64(in.Offset), int64(in.Size)))
	return fuse.ReadResultData(buf[:n]), fuse.OK
}

func (l *latencyFS) Write(_ <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	start := time.Now()
	if int64(in.Offset)+int64(len(data)) > l.size {
		return 0, fuse.Status(syscall.ENOSPC)
	}
	if l.media.fails(ioWrite, int64(in.Offset), int64(len(data)), start) {
		l.wait(ioWrite, len(data), start)
		return 0, fuse.EIO
	}
	n, err := l.f.WriteAt(data, int64(in.Offset))
	if err != nil {
		return uint32(n), fuse.ToStatus(err)
	}
	l.media.touch(ioWrite, int64(in.Offset), int64(n))
	l.work()
	l.wait(ioWrite, len(data), start)
	return uint32(n), fuse.OK
}

// Fsync is a flush of the emulated disk. The host's disk is not synced:
// the emulated disk's flush costs its configured latency, not the host's.
func (l *latencyFS) Fsync(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	start := time.Now()
	l.wait(ioFlush, 0, start)
	if l.media.fails(ioFlush, 0, 0, start) {
		return fuse.EIO
	}
	return fuse.OK
}

func (l *latencyFS) Flush(_ <-chan struct{}, in *fuse.FlushIn) fuse.Status { return fuse.OK }

func (l *latencyFS) Release(_ <-chan struct{}, in *fuse.ReleaseIn) {}

// Fallocate passes discards (hole punching) on, so the backing file stays
// sparse.
func (l *latencyFS) Fallocate(_ <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	if in.NodeId != fileNode {
		return fuse.EINVAL
	}
	return fuse.ToStatus(unix.Fallocate(int(l.f.Fd()), in.Mode, int64(in.Offset), int64(in.Length)))
}

func (l *latencyFS) StatFs(_ <-chan struct{}, _ *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	out.Blocks = uint64(l.size) / 4096
	return fuse.OK
}

// latencyServer is a running latency layer.
type latencyServer struct {
	srv *fuse.Server
	fs  *latencyFS
	mnt string
}

// serveLatency mounts the latency layer at mnt, serving backing as the
// device spec describes (its latencies, channels, and the throttle if it
// is inside the device), until it is unmounted.
func serveLatency(backing, mnt string, spec Spec, logw io.Writer) (*latencyServer, error) {
	spec = spec.withDefaults()
	lat := *spec.Latency
	var caps Limits
	if spec.ThrottleAt == ThrottleDevice {
		caps = NewModel(spec, time.Now()).Limits()
	}
	f, err := openRegular(backing, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		f.Close()
		return nil, err
	}
	lfs := &latencyFS{RawFileSystem: fuse.NewDefaultRawFileSystem(), f: f, size: fi.Size(),
		dev: newDevice(lat, caps, spec.Channels, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))), cpu: spec.ServerCPU,
		media: newMedia(spec.Faults, spec.Cold, fi.Size()), stop: make(chan struct{})}
	lfs.dev.growth = spec.QueueGrowth
	if logw == nil {
		logw = io.Discard
	}
	srv, err := fuse.NewServer(lfs, mnt, &fuse.MountOptions{
		FsName: "iolens-latency", Name: "iolens",
		DirectMountStrict: true,
		MaxBackground:     fuseMaxBackground,
		MaxWrite:          fuseMaxWrite,
		// Asynchronous direct IO: the loop device's requests go to the
		// server as they come, not one at a time.
		ExtraCapabilities: fuse.CAP_ASYNC_DIO | fuse.CAP_PARALLEL_DIROPS,
		Logger:            log.New(logw, "latency: ", log.LstdFlags),
	})
	if err != nil {
		f.Close()
		return nil, &hint.Error{Err: fmt.Errorf("mounting the latency layer on %s: %w", mnt, err),
			Advice: "the latency layer needs FUSE (/dev/fuse, modprobe fuse) and root"}
	}
	lfs.calibrating.Store(true)
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		f.Close()
		return nil, fmt.Errorf("latency layer: %w", err)
	}
	lfs.early.Store(int64(roundTrip(filepath.Join(mnt, latencyFileName)) * 9 / 10))
	lfs.calibrating.Store(false)
	if spec.Faults != nil || spec.Cold != nil {
		go lfs.media.poll(filepath.Join(filepath.Dir(mnt), armFileName), lfs.stop)
	}
	fmt.Fprintf(logw, "latency layer on %s: read %s, write %s, flush %s, channels %d, queue growth %g, server CPU %v per IO, throttle %s; answers up to %v early (90%% of the FUSE round trip)\n",
		mnt, lat.Read, lat.Write, lat.Flush, spec.Channels, spec.QueueGrowth, spec.ServerCPU, LimitsLine(caps), time.Duration(lfs.early.Load()))
	return &latencyServer{srv: srv, fs: lfs, mnt: mnt}, nil
}

// roundTrip is the least time of 200 4 KiB reads of path answered at
// once: the FUSE path's own cost, capped at 200 µs (a busy machine's
// figure is no floor).
func roundTrip(path string) time.Duration {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 4096)
	least := 200 * time.Microsecond
	for i := 0; i < 200; i++ {
		t := time.Now()
		if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
			return 0
		}
		least = min(least, time.Since(t))
	}
	return least
}

// unmount ends the layer; it fails while the loop device still holds it.
func (s *latencyServer) unmount() error {
	err := s.srv.Unmount()
	if err == nil {
		s.srv.Wait()
		s.fs.stopPoll()
		err = s.fs.f.Close()
	}
	return err
}

// RunLatency serves the latency layer of the disk called name under root
// until it is unmounted (by teardown). It is what "iolens emulate latency
// NAME" runs. A signal does not stop it while the loop device still uses
// the layer: that would fail the disk's IO.
func RunLatency(ctx context.Context, root, name string) error {
	d, err := OpenIn(root, name)
	if err != nil {
		return err
	}
	if d.LatencyMount == "" || d.Spec.Latency == nil {
		return fmt.Errorf("emulated disk %q has no latency layer", name)
	}
	s, err := serveLatency(d.Backing, d.LatencyMount, d.Spec, os.Stderr)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { s.srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err := s.unmount(); err == nil {
			return nil
		} else {
			fmt.Fprintf(os.Stderr, "latency: not stopping while in use: %v\n", err)
		}
		<-done
	}
	s.fs.stopPoll()
	return s.fs.f.Close()
}

// stopPoll ends the watch of the arming file, once.
func (l *latencyFS) stopPoll() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
}

// startLatency brings up the latency layer: as a daemon when
// Spec.Executable is set, else in this process.
func (d *Disk) startLatency(ctx context.Context) error {
	if d.Spec.Executable == "" {
		s, err := serveLatency(d.Backing, d.LatencyMount, d.Spec, nil)
		if err != nil {
			return err
		}
		d.infuse = s
		return nil
	}
	logf, err := openRegular(filepath.Join(d.Dir, latencyLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(d.Spec.Executable, daemonArgs("latency", d.root(), d.Name)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	inheritNothing()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the latency layer: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	d.FusePID = cmd.Process.Pid
	d.FuseStart = procStart(d.FusePID)
	if err := d.save(); err != nil {
		return err
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !isMountPoint(d.LatencyMount) {
		select {
		case <-exited:
			return fmt.Errorf("latency layer exited at start: %s", strings.TrimSpace(logTail(filepath.Join(d.Dir, latencyLog))))
		case <-deadline.C:
			return errors.New("latency layer did not mount within 10 s")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// retry calls try every 50 ms until it succeeds, again says its error is
// not worth another try, or the deadline passes (try's last error), or ctx
// ends (ctx's error).
func retry(ctx context.Context, deadline time.Time, try func() error, again func(error) bool) error {
	for {
		err := try()
		if err == nil || !again(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopLatency unmounts the latency layer at mnt (the derived path) and
// ends its daemon. The loop device must be detached first.
func (d *Disk) stopLatency(ctx context.Context, mnt string) error {
	// A detached loop device lets go of the layer's file only when its
	// last opener closes it (udev probes a new file system, slowly on a
	// busy machine): until then unmounting is busy, so try again.
	deadline := time.Now().Add(10 * time.Second)
	if s := d.infuse; s != nil {
		// go-fuse's unmount does not say why it failed: any error is
		// worth another try.
		if err := retry(ctx, deadline, s.unmount, func(error) bool { return true }); err != nil {
			if err == ctx.Err() {
				return err
			}
			return fmt.Errorf("unmounting the latency layer: %w", err)
		}
		d.infuse = nil
		return nil
	}
	var errs []error
	err := retry(ctx, deadline, func() error {
		if !isMountPoint(mnt) {
			return nil
		}
		return unix.Unmount(mnt, 0)
	}, func(err error) bool { return errors.Is(err, unix.EBUSY) })
	if err != nil {
		if err == ctx.Err() {
			return err
		}
		errs = append(errs, fmt.Errorf("unmounting the latency layer %s: %w", mnt, err))
	}
	errs = append(errs, stopDaemon(ctx, d.FusePID, d.FuseStart, "latency", d.root(), d.Name))
	return errors.Join(errs...)
}
