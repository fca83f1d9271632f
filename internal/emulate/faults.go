package emulate

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Faults make the latency layer fail IO as a failing disk does. They
// hold only once the disk is armed (Create arms it when it is made, and
// Disk.Arm again): the file system is made and mounted on a sound disk.
type Faults struct {
	// ReadErrorFrom..ReadErrorTo are bytes of the device whose reads fail
	// with EIO, as unreadable sectors do; writes there succeed.
	ReadErrorFrom int64 `json:"read_error_from_bytes,omitempty"`
	ReadErrorTo   int64 `json:"read_error_to_bytes,omitempty"`
	// Every DownEvery the device fails all IO (reads, writes, flushes)
	// for DownFor, at the end of each period, counted from when it was
	// armed: a device that drops off now and then.
	DownEvery time.Duration `json:"down_every_ns,omitempty"`
	DownFor   time.Duration `json:"down_for_ns,omitempty"`
}

// Cold makes each block of the device slow on its first read since the
// disk was armed, as a volume restored from a snapshot fetches its blocks
// on first touch: that read takes Latency more. A written block is warm.
type Cold struct {
	Latency    time.Duration `json:"latency_ns"`
	BlockBytes int64         `json:"block_bytes"`
}

// maxColdBlocks bounds the cold layer's map of warm blocks (2 MiB).
const maxColdBlocks = 1 << 24

func (f *Faults) validate(size int64) error {
	switch {
	case f.ReadErrorFrom < 0 || f.ReadErrorTo < f.ReadErrorFrom || f.ReadErrorTo > size:
		return specErr("read errors from %d to %d bytes: a region within the disk's %d", f.ReadErrorFrom, f.ReadErrorTo, size)
	case f.DownEvery < 0 || f.DownFor < 0 || f.DownFor > 0 && f.DownEvery <= f.DownFor || f.DownEvery > time.Hour:
		return specErr("down for %v every %v: a period up to 1h, longer than the time down", f.DownFor, f.DownEvery)
	case f.DownFor == 0 && f.DownEvery > 0:
		return specErr("down every %v needs how long (down for)", f.DownEvery)
	}
	return nil
}

func (c *Cold) validate(size int64) error {
	switch {
	case c.Latency <= 0 || c.Latency > MaxLatency:
		return specErr("cold read latency %v: above 0, at most %v", c.Latency, MaxLatency)
	case c.BlockBytes < 4096 || c.BlockBytes&(c.BlockBytes-1) != 0 || c.BlockBytes > 1<<30:
		return specErr("cold block %d bytes: a power of two from 4 KiB to 1 GiB", c.BlockBytes)
	case size/c.BlockBytes > maxColdBlocks:
		return specErr("cold block %d bytes: the disk would have more than %d of them; take a larger block", c.BlockBytes, maxColdBlocks)
	}
	return nil
}

// armFileName holds the disk's arming generation: the layer arms its
// faults, and makes every block cold again, when it changes.
const armFileName = "armed"

// media is the layer's state of the faults and cold blocks.
type media struct {
	faults *Faults
	cold   *Cold

	mu      sync.Mutex
	armedAt time.Time // zero: not armed
	gen     string
	warm    []uint64 // a bit per cold block, set once read or written
}

func newMedia(f *Faults, c *Cold, size int64) *media {
	m := &media{faults: f, cold: c}
	if c != nil {
		m.warm = make([]uint64, (size/c.BlockBytes+64)/64)
	}
	return m
}

// poll reads the arming file every 50 ms until done closes.
func (m *media) poll(path string, done <-chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		m.check(path)
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

func (m *media) check(path string) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 32 {
		return
	}
	gen := strings.TrimSpace(string(b))
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen == m.gen {
		return
	}
	m.gen, m.armedAt = gen, time.Now()
	clear(m.warm)
}

// fails says whether an IO of kind k over [off, off+n) fails now.
func (m *media) fails(k ioKind, off, n int64, now time.Time) bool {
	if m.faults == nil {
		return false
	}
	m.mu.Lock()
	at := m.armedAt
	m.mu.Unlock()
	if at.IsZero() {
		return false
	}
	f := m.faults
	if k == ioRead && off < f.ReadErrorTo && off+n > f.ReadErrorFrom {
		return true
	}
	if f.DownFor > 0 {
		phase := now.Sub(at) % f.DownEvery
		return phase >= f.DownEvery-f.DownFor
	}
	return false
}

// touch marks [off, off+n) warm and says how much longer a read of it
// takes: the cold latency when any of its blocks was cold.
func (m *media) touch(k ioKind, off, n int64) time.Duration {
	if m.cold == nil || n <= 0 || off < 0 {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.armedAt.IsZero() {
		return 0
	}
	cold := false
	for b := off / m.cold.BlockBytes; b <= (off+n-1)/m.cold.BlockBytes && b/64 < int64(len(m.warm)); b++ {
		w, bit := b/64, uint64(1)<<(b%64)
		cold = cold || m.warm[w]&bit == 0
		m.warm[w] |= bit
	}
	if cold && k == ioRead {
		return m.cold.Latency
	}
	return 0
}

// Arm arms the disk's faults and makes every block cold again (a fresh
// restore): the latency layer sees it within 50 ms.
func (d *Disk) Arm() error {
	p := d.Dir + "/" + armFileName
	gen := 0
	if b, err := os.ReadFile(p); err == nil {
		gen, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if err := writeAtomic(p, []byte(strconv.Itoa(gen+1)+"\n")); err != nil {
		return err
	}
	time.Sleep(120 * time.Millisecond)
	return nil
}
