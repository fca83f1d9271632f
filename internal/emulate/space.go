package emulate

import (
	"errors"
	"fmt"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// ErrNoSpace is wrapped by the error about a disk larger than the host
// can hold.
var ErrNoSpace = errors.New("not enough space for the emulated disk")

// A disk's backing file is sparse: it takes space as the disk is
// written, up to its size. If the host's file system (or memory, for
// --ram) ran out first, the emulated disk's writes would fail with IO
// errors part way through a test, and the host's other users would find
// it full. So create refuses a size beyond what is free, less a reserve
// left for everyone else.

// reserve is what a disk may not take of a store of total bytes: 5% of
// it, at least 1 GiB.
func reserve(total uint64) uint64 { return max(1<<30, total/20) }

// fits says whether a disk of size bytes fits in a store (where) with
// avail bytes free out of total.
func fits(size int64, avail, total uint64, where, advice string) error {
	keep := reserve(total)
	room := uint64(0)
	if avail > keep {
		room = avail - keep
	}
	if uint64(size) <= room {
		return nil
	}
	return &hint.Error{
		Err: fmt.Errorf("%w: a %s disk grows as it is written until it fills %s, which has %s free; with %s kept free for others there is room for %s",
			ErrNoSpace, units.HumanBytes(float64(size)), where, units.HumanBytes(float64(avail)), units.HumanBytes(float64(keep)), units.HumanBytes(float64(room))),
		Advice: fmt.Sprintf("use --size %s or less, %s", units.FormatSize(roundBelow(room)), advice),
	}
}

// checkSpace refuses a disk whose backing file could outgrow the state
// root's file system, or for a RAM disk the memory available.
func checkSpace(s Spec, root string) error {
	if s.RAM {
		mi, err := procfs.NewDefaultFS()
		if err != nil {
			return fmt.Errorf("reading memory figures: %w", err)
		}
		m, err := mi.Meminfo()
		if err != nil {
			return fmt.Errorf("reading memory figures: %w", err)
		}
		if m.MemAvailable == nil || m.MemTotal == nil {
			return errors.New("reading memory figures: no MemAvailable in /proc/meminfo")
		}
		return fits(s.SizeBytes, *m.MemAvailable*1024, *m.MemTotal*1024, "memory (--ram)",
			"or keep the disk on the host's file system (no --ram)")
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return fmt.Errorf("checking the space in %s: %w", root, err)
	}
	bs := uint64(st.Bsize)
	return fits(s.SizeBytes, st.Bavail*bs, st.Blocks*bs, "the file system of "+root,
		"or put the disks on a larger file system (--state-dir, $IOLENS_EMULATE_DIR)")
}

// roundBelow is a round size at most n bytes, whole GiB, else MiB, so the
// advice names a size people type.
func roundBelow(n uint64) int64 {
	if n >= 1<<30 {
		return int64(n >> 30 << 30)
	}
	return int64(n >> 20 << 20)
}
