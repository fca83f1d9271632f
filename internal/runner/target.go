package runner

import (
	"fmt"
	"os"

	"github.com/iolens/iolens/internal/units"
	"golang.org/x/sys/unix"
)

// Space is free space on a file system.
type Space struct {
	FreeBytes  int64
	TotalBytes int64
}

// FreeSpace reports the space available to unprivileged writers at path.
func FreeSpace(path string) (Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Space{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	return Space{FreeBytes: int64(st.Bavail) * st.Bsize, TotalBytes: int64(st.Blocks) * st.Bsize}, nil
}

const (
	defaultSize = 1 << 30
	minSize     = 64 << 20
	// reserve is kept free on the target's file system beyond the test
	// files, so a benchmark never fills a disk other software uses.
	reserve = 256 << 20
)

// SpaceError means the target has too little free space.
type SpaceError struct {
	Path            string
	Need, FreeBytes int64
	// SuiteSize is set when the size is the suite's own (a seed's).
	SuiteSize int64
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("not enough free space in %s: the tests need %s (plus %s kept free), %s is free",
		e.Path, units.HumanBytes(float64(e.Need)), units.HumanBytes(reserve), units.HumanBytes(float64(e.FreeBytes)))
}

// Hint says how to fit.
func (e *SpaceError) Hint() string {
	if e.SuiteSize > 0 {
		return fmt.Sprintf("the suite's tests use a %s file, as the write-up it reproduces did: free some space, pick a directory on a larger file system, or scale the tests down with --size (each result then says so)",
			units.HumanBytes(float64(e.SuiteSize)))
	}
	return "free some space, pick a directory on a larger file system, or pass a smaller --size (at least 64M)"
}

// ChooseSuiteSize checks the size a suite's tests ask for (the seeds' 10
// GiB or 5 GiB) against free space. There is no fallback: a smaller file
// would measure something else, so only --size scales the tests down.
func ChooseSuiteSize(suiteSize int64, sp Space, extra int64, path string) (int64, string, error) {
	if suiteSize > sp.FreeBytes-reserve-extra {
		return 0, "", &SpaceError{Path: path, Need: suiteSize + extra, FreeBytes: sp.FreeBytes, SuiteSize: suiteSize}
	}
	return suiteSize, fmt.Sprintf("the suite's own size, %s (%s free)", units.HumanBytes(float64(suiteSize)), units.HumanBytes(float64(sp.FreeBytes))), nil
}

// ChooseSize picks the shared test file's size. A size the user asked for
// is checked against free space; otherwise 1 GiB, reduced to a tenth of the
// free space when that is smaller. extra is what the suite's own-file tests
// need on top. The reason is shown to the user and kept in the result.
func ChooseSize(requested int64, sp Space, extra int64, path string) (int64, string, error) {
	avail := sp.FreeBytes - reserve - extra
	if requested > 0 {
		if requested > avail {
			return 0, "", &SpaceError{Path: path, Need: requested + extra, FreeBytes: sp.FreeBytes}
		}
		return requested, "set with --size", nil
	}
	size := int64(defaultSize)
	reason := fmt.Sprintf("default 1 GiB (%s free)", units.HumanBytes(float64(sp.FreeBytes)))
	if tenth := sp.FreeBytes / 10; tenth < size {
		size = tenth &^ (1<<20 - 1)
		reason = fmt.Sprintf("a tenth of the %s free, below the 1 GiB default", units.HumanBytes(float64(sp.FreeBytes)))
	}
	if size < minSize {
		size = minSize
		reason = "the 64 MiB minimum"
	}
	if size > avail {
		return 0, "", &SpaceError{Path: path, Need: size + extra, FreeBytes: sp.FreeBytes}
	}
	return size, reason, nil
}

// DeviceSize is a block device's size in bytes.
func DeviceSize(dev string) (int64, error) {
	f, err := os.Open(dev)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.Seek(0, 2)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dev, err)
	}
	return n, nil
}
