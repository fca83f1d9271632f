package report

import (
	"context"
	"errors"
	"io"

	"github.com/iolens/iolens/internal/analysis"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/userfile"
)

// decoder reads results from r in any format iolens reads (its own NDJSON
// or JSON array, a watch log, fio's JSON output), streaming. name labels
// errors and results converted from fio output.
func decoder(r io.Reader, name string) *result.Decoder {
	return result.NewDecoder(r, name, result.Formats{Fio: fio.ReadResults})
}

// ReadResults reads every result of one stream.
func ReadResults(r io.Reader, name string) ([]result.Result, error) {
	return decoder(r, name).ReadAll()
}

// ReadFiles reads every named file ("-" is standard input).
func ReadFiles(paths []string, stdin io.Reader) ([]result.Result, error) {
	return ReadFilesContext(context.Background(), paths, stdin, nil)
}

// ReadFilesContext reads every named file as a FileReader does.
func ReadFilesContext(ctx context.Context, paths []string, stdin io.Reader, skipped func(error)) ([]result.Result, error) {
	r := FileReader{Stdin: stdin, Skipped: skipped}
	return r.Read(ctx, paths...)
}

// FileReader reads results files by name ("-" is Stdin, read until ctx
// ends). A named file must be a regular file: a FIFO or a device is
// refused without blocking. What every Read of one FileReader takes
// together is bounded by result.MaxReadBytes (a *result.TooMuchError
// past it) and result.MaxResults (a *result.TooManyError).
type FileReader struct {
	Stdin io.Reader
	// Skipped, if set, hears each line passed over (a
	// *result.DecodeError that names it).
	Skipped func(error)
	left    *budget
}

// Read reads every named file.
func (fr *FileReader) Read(ctx context.Context, paths ...string) ([]result.Result, error) {
	if fr.left == nil {
		fr.left = &budget{left: result.MaxReadBytes, results: result.MaxResults}
	}
	var all []result.Result
	for _, p := range paths {
		rs, err := readFile(ctx, p, fr.Stdin, fr.left, fr.Skipped)
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	analyseFio(all)
	return all, nil
}

// analyseFio gives results read from plain fio output the findings an
// iolens run would have put on them (the etcd verdict, the limits), so
// that every command says of them what 'iolens analyze' says. Records
// iolens wrote carry their own and are left as they are.
func analyseFio(rs []result.Result) {
	result.Subset(rs, func(r *result.Result) bool { return r.PlainFio() && len(r.Findings) == 0 }, analysis.Annotate)
}

func readFile(ctx context.Context, p string, stdin io.Reader, left *budget, skipped func(error)) ([]result.Result, error) {
	name, r := p, io.Reader(nil)
	if p == "-" {
		name, r = "stdin", userfile.Reader(ctx, stdin)
	} else {
		f, err := userfile.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	left.r = r
	d := decoder(left, name)
	if skipped != nil {
		d.Skipped = func(e *result.DecodeError) { skipped(e) }
	}
	d.MaxResults = left.results
	if d.MaxResults <= 0 {
		return nil, &result.TooManyError{Max: result.MaxResults}
	}
	rs, err := d.ReadAll()
	var tm *result.TooMuchError
	if errors.As(err, &tm) {
		return nil, tm // not a fault of this file's format
	}
	var tn *result.TooManyError
	if errors.As(err, &tn) {
		return nil, tn
	}
	left.results -= len(rs)
	return rs, err
}

// budget reads from r until MaxReadBytes have been read over every file,
// and counts the results left of MaxResults.
type budget struct {
	r       io.Reader
	left    int64
	results int
}

func (b *budget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, &result.TooMuchError{Max: result.MaxReadBytes}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// NDJSON writes one result per line: the form iolens saves and reads back.
func NDJSON(w io.Writer, rs []result.Result) error {
	enc := result.NewEncoder(w)
	for i := range rs {
		if err := enc.Encode(&rs[i]); err != nil {
			return err
		}
	}
	return nil
}
