package userfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Outputs are the files one command reads and writes, registered before
// it starts, so that no output lands on an input, on the history database
// or on another output. Paths are compared after symbolic links and "./"
// are resolved, and existing files by device and inode, which also finds
// hard links.
type Outputs struct {
	files []file
}

type file struct {
	role   string // what the command does with it, for messages
	path   string // as given
	abs    string // absolute, symbolic links resolved
	id     fileID
	output bool
}

type fileID struct{ dev, ino uint64 }

// ClashError is an output that is something the command reads or writes
// already.
type ClashError struct {
	Flag, Path string
	// Other says what the path is already: "the input r.ndjson", "the
	// history database", "--html".
	Other string
}

func (e *ClashError) Error() string {
	if strings.HasPrefix(e.Other, "--") {
		return fmt.Sprintf("%s and %s name the same file %s", e.Other, e.Flag, e.Path)
	}
	return fmt.Sprintf("%s %s is %s: iolens never writes over what it reads", e.Flag, e.Path, e.Other)
}

// Hint says what to do.
func (e *ClashError) Hint() string {
	return "give " + e.Flag + " a file of its own"
}

// OutputError is an output that cannot be written where it is named.
type OutputError struct {
	Flag, Path string
	Err        error
	Advice     string
}

func (e *OutputError) Error() string { return fmt.Sprintf("%s %s: %v", e.Flag, e.Path, e.Err) }
func (e *OutputError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *OutputError) Hint() string { return e.Advice }

// Input registers a file the command reads; role says what it is ("the
// input r.ndjson", "the history database"). "-" and "" are standard
// input, which no output can be.
func (o *Outputs) Input(role, path string) {
	if path == "" || path == "-" {
		return
	}
	abs, id, _ := identify(path)
	o.files = append(o.files, file{role: role, path: path, abs: abs, id: id})
}

// Output checks an output before anything is done: it must be a regular
// file or a new path in a directory iolens can write, and none of the
// files registered so far. "" and "-" (standard output) pass.
func (o *Outputs) Output(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	target, fi, err := resolve(path)
	switch {
	case err != nil:
		return &OutputError{Flag: flag, Path: path, Err: err, Advice: "give a regular file or a new path in a directory that exists"}
	case fi != nil && !fi.Mode().IsRegular():
		nr := &NotRegularError{Path: path, Kind: kind(fi.Mode()), Output: true}
		return &OutputError{Flag: flag, Path: path, Err: errors.New("a " + nr.Kind + ", not a regular file"), Advice: nr.Hint()}
	}
	if err := probeDir(filepath.Dir(target)); err != nil {
		return &OutputError{Flag: flag, Path: path, Err: err, Advice: "give a path in a directory that exists and that you can write"}
	}
	abs, id, _ := identify(path)
	for _, f := range o.files {
		same := f.abs == abs || (id != fileID{} && f.id == id)
		if !same {
			continue
		}
		return &ClashError{Flag: flag, Path: path, Other: f.role}
	}
	o.files = append(o.files, file{role: flag, path: path, abs: abs, id: id, output: true})
	return nil
}

// resolve follows path's symbolic links: the file an output writes, and
// its information (nil when it does not exist yet). A link to nothing is
// an error: creating through it would write wherever the link points. A
// link anywhere on the way that another user planted in a sticky
// world-writable directory (/tmp) is refused, not followed
// (*PlantedLinkError), as the kernel's protected_symlinks refuses it.
func resolve(path string) (string, fs.FileInfo, error) {
	target, err := follow(path)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return "", nil, fmt.Errorf("a symbolic link to nothing (%s)", target)
		}
		return target, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return target, fi, nil
}

// PlantedLinkError is a symbolic link in a sticky world-writable
// directory that belongs to neither the caller nor the directory's owner:
// anyone could have put it there to turn a write onto another file.
type PlantedLinkError struct {
	Link string
	UID  uint32
}

func (e *PlantedLinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link of another user (uid %d) in a shared directory; iolens does not write through it", e.Link, e.UID)
}

// Hint says what to do.
func (e *PlantedLinkError) Hint() string {
	return "give a path of your own (not a link another user made in /tmp or a like directory)"
}

// maxLinks is how many symbolic links one path may go through, as the
// kernel allows (ELOOP beyond).
const maxLinks = 40

// follow resolves every symbolic link on path, component by component,
// and refuses one that another user planted in a sticky world-writable
// directory. A path whose last component does not exist resolves to
// itself in the resolved directory.
func follow(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	done := "/"
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		var st unix.Stat_t
		if err := unix.Lstat(next, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				// The rest is to be created (or its directory is missing,
				// which the caller reports).
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			return "", &fs.PathError{Op: "lstat", Path: next, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			done = next
			continue
		}
		if hops++; hops > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: path, Err: unix.ELOOP}
		}
		if err := linkAllowed(done, next, st.Uid); err != nil {
			return "", err
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(to) {
			done = "/"
		}
		rest = append(strings.Split(strings.TrimPrefix(to, "/"), "/"), rest...)
	}
	return done, nil
}

// linkAllowed is the kernel's protected_symlinks rule: a link in a
// sticky world-writable directory is followed only when its owner is the
// caller or the directory's owner.
func linkAllowed(dir, link string, owner uint32) error {
	var ds unix.Stat_t
	if err := unix.Stat(dir, &ds); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	shared := ds.Mode&unix.S_ISVTX != 0 && ds.Mode&0o002 != 0
	if !shared || owner == uint32(os.Geteuid()) || owner == ds.Uid {
		return nil
	}
	return &PlantedLinkError{Link: link, UID: owner}
}

// identify is a path's absolute form, symbolic links resolved (its
// directory's when it does not exist), and the identity of the file there.
func identify(path string) (string, fileID, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path), fileID{}, err
	}
	var id fileID
	var st unix.Stat_t
	if unix.Stat(abs, &st) == nil {
		id = fileID{dev: uint64(st.Dev), ino: st.Ino}
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, id, nil
	}
	dir, base := filepath.Split(abs)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(r, base), id, nil
	}
	return abs, id, nil
}

// probeDir checks that a file can be created in dir (a read-only mount,
// missing permissions or a missing directory show here, before the work
// they would waste) by creating and removing one.
func probeDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".iolens-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Write replaces the file at path with what write writes, or creates it:
// through a temporary file in the same directory that is synced, closed
// and then renamed over it, so that a reader never sees half a file and a
// failed write (a full disk) leaves the old one. A symbolic link is
// followed: the file it names is replaced. path must be a regular file or
// a new path. An existing file keeps its permissions.
func Write(path string, write func(io.Writer) error) error {
	target, fi, err := resolve(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	mode := fs.FileMode(0o644)
	if fi != nil {
		if !fi.Mode().IsRegular() {
			return &NotRegularError{Path: path, Kind: kind(fi.Mode()), Output: true}
		}
		mode = fi.Mode().Perm()
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".iolens-*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("writing %s: %w", path, err) }
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	done = true
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable; file systems that cannot sync a
// directory say so, which is no failure of the write.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}

// AppendFile is an output that results are appended to as they come.
// Every write is checked: the first error is kept and returned by Close,
// which also syncs the file.
type AppendFile struct {
	f    *os.File
	path string
	err  error
}

// Append opens path for appending, creating it: a regular file or a new
// path, never a FIFO (which would block) or a device.
func Append(path string) (*AppendFile, error) {
	target, fi, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if fi != nil && !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Kind: kind(fi.Mode()), Output: true}
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return nil, &NotRegularError{Path: path, Kind: "FIFO", Output: true}
		}
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &NotRegularError{Path: path, Kind: kind(fi.Mode()), Output: true}
	}
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
	}
	return &AppendFile{f: f, path: path}, nil
}

// Write appends p; after a failed write, every later one fails too.
func (a *AppendFile) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.f.Write(p)
	if err != nil {
		a.err = fmt.Errorf("writing %s: %w", a.path, err)
		return n, a.err
	}
	return n, nil
}

// Close syncs and closes the file, returning the first error of any
// write, the sync or the close. Closing again, or a nil file, returns the
// same.
func (a *AppendFile) Close() error {
	if a == nil {
		return nil
	}
	if a.f == nil {
		return a.err
	}
	serr := a.f.Sync()
	cerr := a.f.Close()
	a.f = nil
	switch {
	case a.err != nil:
		return a.err
	case serr != nil:
		a.err = fmt.Errorf("writing %s: %w", a.path, serr)
	case cerr != nil:
		a.err = fmt.Errorf("writing %s: %w", a.path, cerr)
	}
	return a.err
}
