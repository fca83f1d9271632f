package report

import (
	"io"

	"github.com/iolens/iolens/internal/diagnosis"
)

// The tests draw through these; the commands draw through the
// registries (Results, Diagnoses) directly.

// RendererFor returns the renderer of a results report's format.
func RendererFor(format string) (Renderer, error) {
	f, err := Results.Lookup(format)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer, out diagnosis.Outcome) error { return f.Write(w, Input{Outcome: out}) }, nil
}

// Text writes the human report: a header per target, the verdict, what to
// change, the findings once per story, one row per test and direction,
// and notes.
func Text(w io.Writer, out diagnosis.Outcome) error { return text(w, out, false) }

// TextVerbose is Text with every finding of every test, with the details
// only fio's own output explains, and each curve's evidence.
func TextVerbose(w io.Writer, out diagnosis.Outcome) error { return text(w, out, true) }

// WriteDiagnosis writes diagnose's report of out in format: text
// (verbose: with every finding of every test), json (the diagnosis with
// the results), md (or markdown) or html. Every format reads the
// diagnosis out holds: it is built once, before any report.
func WriteDiagnosis(w io.Writer, format string, out diagnosis.Outcome, verbose bool) error {
	f, err := Diagnoses.Lookup(format)
	if err != nil {
		f = Diagnoses.Formats[0]
	}
	return f.Write(w, Input{Outcome: out, Verbose: verbose})
}
