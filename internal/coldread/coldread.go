package coldread

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
)

// Options bound a sample.
type Options struct {
	// MaxBytes is the most it reads, first and second touches together.
	MaxBytes int64
	// BlockBytes is the size of each read (default 4 KiB).
	BlockBytes int64
	// Depth is how many reads are in flight in the deep phase (default 32).
	Depth int
	// QD1Time bounds the one-at-a-time phase (default 15 s): a cold
	// block can take tens of milliseconds.
	QD1Time time.Duration
	// Seed picks the blocks (0: a random one).
	Seed uint64
}

// Bounds of a sample: samples lie at least spacingBytes apart, so that
// no two fall in one block a restore fetches at once; the files walked
// and the samples taken are bounded whatever the directory holds.
const (
	spacingBytes   = 1 << 20
	maxFiles       = 1 << 20
	maxSamples     = 1 << 16
	maxQD1Samples  = 512
	defaultQD1Time = 15 * time.Second
	// slowFactor: a first read slower than this many times the second
	// touches' median (and than their p99) is a slow block.
	slowFactor = 3.0
	// coldShare is the share of slow blocks that makes the data cold.
	coldShare = 0.10
)

// Touch is what one pass over the samples measured.
type Touch struct {
	N        int     `json:"n"`
	MedianNs float64 `json:"median_ns"`
	MeanNs   float64 `json:"mean_ns"`
	P99Ns    float64 `json:"p99_ns"`
	IOPS     float64 `json:"iops"`
	BWBytes  float64 `json:"bw_bytes"`
}

// Phase is one depth: first and second touch of the same blocks.
type Phase struct {
	QD     int   `json:"qd"`
	First  Touch `json:"first"`
	Second Touch `json:"second"`
	// Slow is how many blocks' first read was slow (SlowFactor).
	Slow int `json:"slow"`
}

// Report is a sample of existing data.
type Report struct {
	Dir        string `json:"dir"`
	Files      int    `json:"files"`
	DataBytes  int64  `json:"data_bytes"`
	BlockBytes int64  `json:"block_bytes"`
	ReadBytes  int64  `json:"read_bytes"`
	QD1        Phase  `json:"qd1"`
	Deep       Phase  `json:"deep"`
	// SlowShare is the share of the QD1 phase's blocks that were slow.
	SlowShare float64 `json:"slow_share"`
	Cold      bool    `json:"cold"`
	// WarmSeconds is how long reading all DataBytes would take at the
	// deep phase's first-touch rate (0 when not cold); WarmCommand reads
	// it all once, read-only.
	WarmSeconds float64  `json:"warm_s"`
	WarmCommand string   `json:"warm_command"`
	Verdict     []string `json:"verdict"`
	// Skipped counts files that could not be opened for direct reads.
	Skipped int `json:"skipped"`
}

type file struct {
	path string
	size int64
}

type sample struct {
	f   int
	off int64
}

// Sample measures the data under dir.
func Sample(ctx context.Context, dir string, o Options) (*Report, error) {
	if o.BlockBytes == 0 {
		o.BlockBytes = 4096
	}
	if o.Depth == 0 {
		o.Depth = 32
	}
	if o.QD1Time == 0 {
		o.QD1Time = defaultQD1Time
	}
	if o.BlockBytes < 512 || o.BlockBytes > spacingBytes || o.BlockBytes&(o.BlockBytes-1) != 0 {
		return nil, fmt.Errorf("block size %d: a power of two from 512 B to 1 MiB", o.BlockBytes)
	}
	if o.MaxBytes < 4*o.BlockBytes {
		return nil, &hint.Error{Err: fmt.Errorf("a read budget of %s is too small to sample anything", units.HumanBytes(float64(o.MaxBytes))),
			Advice: "give at least 1 MiB, e.g. --max-read 64MiB"}
	}
	if o.Depth < 1 || o.Depth > 1024 {
		return nil, fmt.Errorf("depth %d: 1 to 1024", o.Depth)
	}
	files, total, err := walk(ctx, dir, o.BlockBytes)
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, Files: len(files), DataBytes: total, BlockBytes: o.BlockBytes}
	if total == 0 {
		return nil, &hint.Error{Err: fmt.Errorf("no file of %s or more under %s", units.HumanBytes(float64(o.BlockBytes)), dir),
			Advice: "give the directory that holds the volume's data"}
	}
	seed := o.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// Each block is read twice: the budget covers 2 reads per sample.
	n := int(min(o.MaxBytes/(2*o.BlockBytes), total/spacingBytes+int64(len(files)), maxSamples))
	ss := pick(files, total, n, o.BlockBytes, rng)
	if len(ss) < 2 {
		return nil, fmt.Errorf("the data under %s is too small to sample", dir)
	}
	nq := min(maxQD1Samples, len(ss)/4+1, len(ss)-1)
	fds, skipped, err := open(files)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	r.Skipped = skipped
	ss = slices.DeleteFunc(ss, func(s sample) bool { return fds[s.f] < 0 })
	if len(ss) < 2 {
		return nil, &hint.Error{Err: fmt.Errorf("no file under %s could be opened for direct reads", dir),
			Advice: "run as the data's owner or root, on a file system with O_DIRECT (not tmpfs)"}
	}
	// The first reads of a process pay for what it sets up (threads, the
	// file's mapping): a few blocks read first, and left out, keep that
	// out of the first touches.
	warmup := min(8, len(ss)/8)
	if _, err := readAll(ctx, fds, ss[:warmup], o.BlockBytes, 1, time.Time{}); err != nil {
		return nil, err
	}
	ss = ss[warmup:]
	nq = min(nq, len(ss)-1)
	qd1, deep := ss[:nq], ss[nq:]

	deadline := time.Now().Add(o.QD1Time)
	first, err := readAll(ctx, fds, qd1, o.BlockBytes, 1, deadline)
	if err != nil {
		return nil, err
	}
	qd1 = qd1[:len(first.lat)]
	second, err := readAll(ctx, fds, qd1, o.BlockBytes, 1, time.Time{})
	if err != nil {
		return nil, err
	}
	r.QD1 = phase(1, first, second, o.BlockBytes)
	dfirst, err := readAll(ctx, fds, deep, o.BlockBytes, o.Depth, time.Time{})
	if err != nil {
		return nil, err
	}
	dsecond, err := readAll(ctx, fds, deep, o.BlockBytes, o.Depth, time.Time{})
	if err != nil {
		return nil, err
	}
	r.Deep = phase(o.Depth, dfirst, dsecond, o.BlockBytes)
	r.ReadBytes = int64(warmup+2*(len(first.lat)+len(dfirst.lat))) * o.BlockBytes
	// Which blocks are slow is read one at a time: at depth a read's
	// latency is the queue's as much as its own. The deep phase gives
	// the rates.
	if n := r.QD1.First.N; n > 0 {
		r.SlowShare = float64(r.QD1.Slow) / float64(n)
	}
	r.Cold = r.SlowShare >= coldShare
	r.WarmCommand = "fio --name=warm --opendir=" + shellQuote(dir) + " --rw=read --bs=1M --iodepth=32 --ioengine=libaio --direct=1 --readonly"
	if r.Cold && r.Deep.First.BWBytes > 0 {
		r.WarmSeconds = float64(total) / r.Deep.First.BWBytes
	}
	r.Verdict = verdict(r)
	return r, nil
}

// walk lists the regular files under dir of at least one block, without
// following symbolic links, within maxFiles.
func walk(ctx context.Context, dir string, bs int64) ([]file, int64, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, 0, err
	}
	if !fi.IsDir() {
		return nil, 0, &hint.Error{Err: fmt.Errorf("%s is not a directory", dir), Advice: "give the directory that holds the data"}
	}
	var files []file
	var total int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if d != nil && d.IsDir() && p != dir {
				return fs.SkipDir // unreadable: sample the rest
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() < bs {
			return nil
		}
		if len(files) >= maxFiles {
			return fs.SkipAll
		}
		files = append(files, file{p, info.Size()})
		total += info.Size()
		return nil
	})
	return files, total, err
}

// pick draws n samples over the files' bytes as if laid end to end, each
// aligned to bs, at most one per SpacingBytes of a file, in a random
// order.
func pick(files []file, total int64, n int, bs int64, rng *rand.Rand) []sample {
	starts := make([]int64, len(files))
	var at int64
	for i, f := range files {
		starts[i], at = at, at+f.size
	}
	type key struct {
		f     int
		chunk int64
	}
	seen := map[key]bool{}
	var out []sample
	for tries := 0; len(out) < n && tries < 4*n+16; tries++ {
		x := rng.Int64N(total)
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > x }) - 1
		off := (x - starts[i]) / bs * bs
		if off+bs > files[i].size {
			off = (files[i].size - bs) / bs * bs
		}
		k := key{i, off / spacingBytes}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, sample{i, off})
	}
	return out
}

// open opens each file read-only for direct reads, without updating its
// access time where the kernel allows (the owner, or root); a file that
// cannot be is skipped (-1).
func open(files []file) ([]int, int, error) {
	fds := make([]int, len(files))
	skipped := 0
	for i, f := range files {
		fd, err := unix.Open(f.path, unix.O_RDONLY|unix.O_DIRECT|unix.O_NOATIME|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if errors.Is(err, unix.EPERM) {
			fd, err = unix.Open(f.path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		}
		if errors.Is(err, unix.EINVAL) {
			for _, fd := range fds[:i] {
				if fd >= 0 {
					unix.Close(fd)
				}
			}
			return nil, 0, &hint.Error{Err: fmt.Errorf("%s: the file system refused direct reads", f.path),
				Advice: "sample data on a block-device file system (ext4, xfs); a page cache would hide the disk"}
		}
		if err != nil {
			fds[i] = -1
			skipped++
			continue
		}
		fds[i] = fd
	}
	return fds, skipped, nil
}

type pass struct {
	lat  []time.Duration
	took time.Duration
}

// readAll reads each sample once, depth at a time, in order, until the
// deadline (zero: none); a read error ends it.
func readAll(ctx context.Context, fds []int, ss []sample, bs int64, depth int, deadline time.Time) (pass, error) {
	lat := make([]time.Duration, len(ss))
	done := make([]bool, len(ss))
	var next int
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < depth; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, err := unix.Mmap(-1, 0, int(bs), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
				return
			}
			defer unix.Munmap(buf)
			for {
				mu.Lock()
				i := next
				stop := i >= len(ss) || firstErr != nil || ctx.Err() != nil || !deadline.IsZero() && time.Now().After(deadline)
				if !stop {
					next++
				}
				mu.Unlock()
				if stop {
					return
				}
				s := ss[i]
				t := time.Now()
				_, err := unix.Pread(fds[s.f], buf, s.off)
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					firstErr = errors.Join(firstErr, fmt.Errorf("reading at offset %d: %w", s.off, err))
				} else {
					lat[i], done[i] = d, true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return pass{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return pass{}, err
	}
	n := 0
	for n < len(done) && done[n] {
		n++
	}
	return pass{lat: lat[:n], took: time.Since(start)}, nil
}

func touch(p pass, bs int64) Touch {
	t := Touch{N: len(p.lat)}
	if t.N == 0 {
		return t
	}
	s := slices.Clone(p.lat)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	t.MeanNs = sum / float64(t.N)
	t.MedianNs = float64(s[t.N/2])
	t.P99Ns = float64(s[min(t.N-1, int(math.Ceil(0.99*float64(t.N)))-1)])
	if p.took > 0 {
		t.IOPS = float64(t.N) / p.took.Seconds()
		t.BWBytes = t.IOPS * float64(bs)
	}
	return t
}

func phase(qd int, first, second pass, bs int64) Phase {
	ph := Phase{QD: qd, First: touch(first, bs), Second: touch(second, bs)}
	thr := math.Max(slowFactor*ph.Second.MedianNs, ph.Second.P99Ns)
	for _, d := range first.lat {
		if float64(d) > thr {
			ph.Slow++
		}
	}
	return ph
}

func verdict(r *Report) []string {
	n := r.QD1.First.N
	if !r.Cold {
		return []string{fmt.Sprintf("warm: %s of %d blocks sampled one at a time slow on first read (QD1 first read %s, second %s): the data reads at the disk's own speed",
			units.Whole(r.SlowShare*100)+"%", n, units.Latency(r.QD1.First.MedianNs), units.Latency(r.QD1.Second.MedianNs))}
	}
	out := []string{fmt.Sprintf("cold: %s of sampled blocks slow on first read (%s against %s), as a volume restored from a snapshot is",
		units.Whole(r.SlowShare*100)+"%", units.Latency(r.QD1.First.MedianNs), units.Latency(r.QD1.Second.MedianNs))}
	out = append(out, fmt.Sprintf("first touch: %s IOPS at QD1, %s IOPS at QD%d; once read: %s and %s IOPS",
		units.Figure(r.QD1.First.IOPS), units.Figure(r.Deep.First.IOPS), r.Deep.QD, units.Figure(r.QD1.Second.IOPS), units.Figure(r.Deep.Second.IOPS)))
	if r.WarmSeconds > 0 {
		out = append(out, fmt.Sprintf("to warm all %s at the first-touch rate of %s reads at QD%d (%s): about %s; reading it once does it: %s",
			units.HumanBytes(float64(r.DataBytes)), units.IOSize(r.BlockBytes), r.Deep.QD, units.MBps(r.Deep.First.BWBytes), units.FormatSeconds(r.WarmSeconds), r.WarmCommand))
	}
	return out
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
