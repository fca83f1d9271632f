package report

import (
	"io"

	"github.com/iolens/iolens/internal/termtext"
)

// Escaping is what a format's output passes through on its way to a
// stream, so that what others wrote into the results (a label, a path,
// fio's or a pod's message) never drives the reader's terminal and data
// reads back the same. Each Format names its own; color says the stream
// is a terminal that wants colour.
type Escaping func(w io.Writer, color bool) io.Writer

// textOut is the escaping of a report read on a terminal: the terminal
// filter (termtext), and severity tokens coloured when color is set.
func textOut(w io.Writer, color bool) io.Writer {
	if color {
		w = colorWriter{w}
	}
	return termtext.NewWriter(w)
}

// plainOut is the escaping of text read elsewhere (Markdown, CSV, a
// listing): the terminal filter, never coloured. A Format without an
// escaping of its own has this one.
func plainOut(w io.Writer, _ bool) io.Writer { return termtext.NewWriter(w) }

// dataOut is the escaping of JSON and NDJSON: the few characters a JSON
// encoder leaves raw that a terminal would obey, as \uXXXX escapes
// (termtext.JSONWriter): the same data to any reader.
func dataOut(w io.Writer, _ bool) io.Writer { return termtext.NewJSONWriter(w) }

// pageOut is the escaping of an HTML page: every control character as
// \uXXXX text (termtext.HTMLWriter); the page escapes its markup itself.
func pageOut(w io.Writer, _ bool) io.Writer { return termtext.NewHTMLWriter(w) }

// rawOut passes the output as it is: a live view that draws iolens's own
// codes and filters what it draws itself (watch -o tty).
func rawOut(w io.Writer, _ bool) io.Writer { return w }

// To is where f's output goes on w: through its own escaping.
func (f Format) To(w io.Writer, color bool) io.Writer {
	if f.Escape == nil {
		return plainOut(w, color)
	}
	return f.Escape(w, color)
}
