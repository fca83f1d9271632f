package userfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/iolens/iolens/internal/units"
	"golang.org/x/sys/unix"
)

// NotRegularError is a named file that is not a regular file: a
// directory, a FIFO, a device or a socket.
type NotRegularError struct {
	Path string
	Kind string // "directory", "FIFO", ...
	// Output says the path was given as an output.
	Output bool
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is a %s, not a regular file", e.Path, e.Kind)
}

// Hint says what to give instead.
func (e *NotRegularError) Hint() string {
	if e.Output {
		return "give a regular file or a new path; to write to standard output, leave the flag out or give '-'"
	}
	if e.Kind == "FIFO" || e.Kind == "socket" || e.Kind == "character device" {
		return "give a regular file; to read a pipe, give '-' and redirect it to standard input"
	}
	return "give a regular file"
}

// TooLargeError is an input longer than its bound.
type TooLargeError struct {
	Name string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s", e.Name, units.IOSize(e.Max))
}

// Hint says what to do.
func (e *TooLargeError) Hint() string {
	return "this is not the file iolens expects here: check the name"
}

// NoInputError is standard input that gave nothing within the wait.
type NoInputError struct {
	Name string
	Wait time.Duration
}

func (e *NoInputError) Error() string {
	return fmt.Sprintf("nothing came on %s in %s", e.Name, e.Wait)
}

// Hint says what to do.
func (e *NoInputError) Hint() string {
	return "pipe or redirect the file to iolens (iolens ... < FILE), or give its name"
}

// Kind names a file type as people say it: "directory", "FIFO",
// "character device"...
func Kind(m fs.FileMode) string { return kind(m) }

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// OpenError is a named file that could not be opened.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// Hint says what to check.
func (e *OpenError) Hint() string {
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		return "check the name: there is no file there"
	case errors.Is(e.Err, fs.ErrPermission):
		return "check the file's permissions: this user may not read it"
	}
	return "check the name and the file's permissions"
}

// Open opens a regular file for reading. The open itself never blocks: a
// FIFO without a writer, a device or a directory is a *NotRegularError;
// any other failure an *OpenError.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &OpenError{Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Kind: kind(fi.Mode())}
	}
	// Reads of a regular file do not block; clear the flag anyway so the
	// file behaves as any other.
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
	}
	return f, nil
}

// ReadFile reads a regular file (Open) of at most max bytes; a longer one
// is a *TooLargeError, found without reading more than max+1 bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readMax(f, path, max)
}

func readMax(r io.Reader, name string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Name: name, Max: max}
	}
	return b, nil
}

// ReadAll reads r (standard input) to its end, at most max bytes. It
// returns ctx's error as soon as ctx ends, and a *NoInputError when wait
// is positive and not a byte came within it. A read still blocked when it
// gives up is left behind: the command is about to end.
func ReadAll(ctx context.Context, r io.Reader, name string, max int64, wait time.Duration) ([]byte, error) {
	type chunk struct {
		b   []byte
		err error
	}
	ch := make(chan chunk, 1)
	go func() {
		var buf []byte
		p := make([]byte, 64<<10)
		for {
			n, err := r.Read(p)
			buf = append(buf, p[:n]...)
			if int64(len(buf)) > max {
				ch <- chunk{nil, &TooLargeError{Name: name, Max: max}}
				return
			}
			if err == io.EOF {
				ch <- chunk{buf, nil}
				return
			}
			if err != nil {
				ch <- chunk{nil, err}
				return
			}
		}
	}()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case c := <-ch:
		return c.b, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timeout:
		return nil, &NoInputError{Name: name, Wait: wait}
	}
}

// Reader returns r as a reader whose reads end with ctx's error once ctx
// ends, even while r blocks (standard input from a terminal or a pipe
// that stays open). Each read runs in its own goroutine.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	res  chan readResult
	buf  []byte // the goroutine reads into it, never into a caller's slice
	left []byte // read and not yet returned
	err  error  // the last read's error, returned once left is empty
}

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.left) > 0 {
		n := copy(p, c.left)
		c.left = c.left[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.res == nil {
		c.res = make(chan readResult, 1)
		if c.buf == nil {
			c.buf = make([]byte, 64<<10)
		}
		go func() {
			n, err := c.r.Read(c.buf)
			c.res <- readResult{n, err}
		}()
	}
	select {
	case r := <-c.res:
		c.res = nil
		c.left, c.err = c.buf[:r.n], r.err
		n := copy(p, c.left)
		c.left = c.left[n:]
		if n == 0 {
			return 0, c.err
		}
		return n, nil
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
