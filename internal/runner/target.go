package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
	"golang.org/x/sys/unix"
)

// Space is free space on a file system.
type Space struct {
	FreeBytes  int64
	TotalBytes int64
}

// freeSpace reports the space available to unprivileged writers at path.
func freeSpace(path string) (Space, error) {
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
		return fmt.Sprintf("the suite's tests ask for a %s file (their size, offsets and filesize): free some space, pick a directory on a larger file system, or scale the tests down with --size (each result then says so)",
			units.HumanBytes(float64(e.SuiteSize)))
	}
	return "free some space, pick a directory on a larger file system, or pass a smaller --size (at least 64M)"
}

// chooseSuiteSize checks the size a suite's tests ask for (the seeds' 10
// GiB or 5 GiB) against free space. There is no fallback: a smaller file
// would measure something else, so only --size scales the tests down.
func chooseSuiteSize(suiteSize int64, sp Space, extra int64, path string) (int64, string, error) {
	if suiteSize > sp.FreeBytes-reserve-extra {
		return 0, "", &SpaceError{Path: path, Need: suiteSize + extra, FreeBytes: sp.FreeBytes, SuiteSize: suiteSize}
	}
	return suiteSize, fmt.Sprintf("the suite's own size, %s (%s free)", units.HumanBytes(float64(suiteSize)), units.HumanBytes(float64(sp.FreeBytes))), nil
}

// chooseSize picks the shared test file's size. A size the user asked for
// is checked against free space; otherwise 1 GiB, reduced to a tenth of the
// free space when that is smaller. extra is what the suite's own-file tests
// need on top. The reason is shown to the user and kept in the result.
func chooseSize(requested int64, sp Space, extra int64, path string) (int64, string, error) {
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

// deviceSize is a block device's size in bytes.
func deviceSize(dev string) (int64, error) {
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

// defaultDir is the directory tested when none is given: iolens's own,
// created when missing and removed afterwards.
const defaultDir = "iolens-scratch"

// MissingDirError is a target directory that does not exist.
type MissingDirError struct{ Dir string }

func (e *MissingDirError) Error() string { return e.Dir + " does not exist" }

// Hint says why iolens does not create it, and how to ask it to.
func (e *MissingDirError) Hint() string {
	return "check the path: a typo, or a volume that is not mounted, would measure the disk below it instead; pass --create to have iolens create it (it removes what it created afterwards)"
}

// targetDir returns the absolute target directory, creating it when it
// is missing and create is set (or dir is the default), and the
// directories it created, outermost first.
func targetDir(dir string, create bool) (string, []string, error) {
	if dir == "" {
		dir, create = defaultDir, true
	}
	// fio runs in the scratch directory and is handed absolute paths.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && !fi.IsDir():
		return "", nil, &hint.Error{Err: fmt.Errorf("%s is not a directory", abs), Advice: "give a directory to test, or --device for a block device"}
	case err == nil:
		return abs, nil, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", nil, err
	case !create:
		return "", nil, &MissingDirError{Dir: abs}
	}
	var missing []string
	for p := abs; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		missing = append([]string{p}, missing...)
	}
	var created []string
	for _, p := range missing {
		if err := os.Mkdir(p, 0o755); err != nil {
			return "", nil, errors.Join(fmt.Errorf("creating target directory: %w", err), removeDirs(created))
		}
		created = append(created, p)
	}
	return abs, created, nil
}

// removeDirs removes the directories iolens created, innermost first,
// each only when empty: whatever someone else put there stays.
func removeDirs(created []string) error {
	var errs []error
	for i := len(created) - 1; i >= 0; i-- {
		if err := os.Remove(created[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s, which iolens created: %w", created[i], err))
			break
		}
	}
	return errors.Join(errs...)
}

// rootDiskNote says that dir is on the root disk while other disks are
// mounted: the usual sign of a mistyped path or a volume not mounted.
func rootDiskNote(dir, disk string, others []string) string {
	return fmt.Sprintf("%s is on the root file system: this is the root disk, %s, while other disks are mounted (%s)", dir, disk, strings.Join(others, ", "))
}

// RootDisk answers, before a run, whether dir (or, when it does not exist
// yet, the directory it would be created in) lies on the root file
// system while other disks are mounted: then it returns RootDiskNote's
// words, for the first line a command prints. It returns "" otherwise, or
// when it cannot tell.
func RootDisk(dir string) string {
	if dir == "" {
		dir = defaultDir
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	p := abs
	for {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		p = filepath.Dir(p)
	}
	var rv diskstats.Resolver
	res, err := rv.Resolve(p)
	if err != nil || !onRootFS(p) || res.Primary() == "" {
		return ""
	}
	if others := rv.OtherDisks(res); len(others) > 0 {
		return rootDiskNote(abs, res.Primary(), others)
	}
	return ""
}

// onRootFS reports whether path is on the file system mounted at /.
func onRootFS(path string) bool {
	var a, b unix.Stat_t
	return unix.Stat(path, &a) == nil && unix.Stat("/", &b) == nil && a.Dev == b.Dev
}
