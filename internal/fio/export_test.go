package fio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// The tests read whole outputs through these; ReadResults reads a stream
// with the same Splitter and Decode, a line at a time.

// Parse extracts every JSON document from fio's output: text before the
// first document, between documents (status-interval dumps) and after the
// last is returned as diagnostics. It tolerates bare nan/inf values.
func Parse(data []byte) (docs []*Output, diagnostics []string, err error) {
	var sp Splitter
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		raw, diag := sp.Line(sc.Text())
		if diag != "" {
			diagnostics = append(diagnostics, diag)
		}
		if raw != nil {
			doc, derr := Decode(raw)
			if derr != nil {
				return docs, diagnostics, derr
			}
			docs = append(docs, doc)
		}
	}
	if err := sc.Err(); err != nil {
		return docs, diagnostics, fmt.Errorf("reading fio output: %w", err)
	}
	if sp.Partial() {
		return docs, diagnostics, fmt.Errorf("fio output ends inside a JSON document (fio killed before it finished writing?)")
	}
	if len(docs) == 0 {
		return nil, diagnostics, ErrNoDocument
	}
	return docs, diagnostics, nil
}

// ParseReader is Parse over a reader.
func ParseReader(r io.Reader) ([]*Output, []string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	return Parse(b)
}
