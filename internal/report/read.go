package report

import (
	"io"
	"os"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// Decoder reads results from r in any format iolens reads (its own NDJSON
// or JSON array, a watch log, fio's JSON output), streaming. name labels
// errors and results converted from fio output.
func Decoder(r io.Reader, name string) *result.Decoder {
	return result.NewDecoder(r, name, result.Formats{Fio: fio.ReadResults})
}

// ReadResults reads every result of one stream.
func ReadResults(r io.Reader, name string) ([]result.Result, error) {
	return Decoder(r, name).ReadAll()
}

// ReadFiles reads every named file ("-" is standard input).
func ReadFiles(paths []string, stdin io.Reader) ([]result.Result, error) {
	var all []result.Result
	for _, p := range paths {
		rs, err := readFile(p, stdin)
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	return all, nil
}

func readFile(p string, stdin io.Reader) ([]result.Result, error) {
	if p == "-" {
		return ReadResults(stdin, "stdin")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadResults(f, p)
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
