package report

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// WriteOut writes to path (atomically: a reader never sees half a file)
// or, when path is empty or "-", to w.
func WriteOut(w io.Writer, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(w)
	}
	f, err := os.CreateTemp(dirOf(path), ".iolens-*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return path[:i]
	}
	return "."
}
