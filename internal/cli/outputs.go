package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/spf13/pflag"
)

// outputFiles are the files a command writes besides its report on
// standard output: --out, always the NDJSON copy of the results, and
// --html, the HTML report.
type outputFiles struct {
	out, html string
	// pageOnly is the old spelling -o html --out FILE: the page goes to
	// FILE instead of standard output, and there is no NDJSON copy.
	pageOnly bool
}

const htmlFlagHelp = "also write the HTML report (one self-contained page) to this file"

func (o *outputFiles) addFlags(f *pflag.FlagSet, outHelp string) {
	f.StringVar(&o.out, "out", "", outHelp)
	f.StringVar(&o.html, "html", "", htmlFlagHelp)
}

// resolve checks the two files against the format on standard output. It
// keeps -o html --out FILE working as it used to (the page in FILE), with
// a note on errOut. renamed says that --out used to name the rendered
// report for any format (report, compare): then the note says where the
// report goes now.
func (o *outputFiles) resolve(format string, errOut io.Writer, renamed bool) error {
	if o.out != "" && o.out == o.html {
		return &UsageError{Err: fmt.Errorf("--out and --html name the same file %q", o.out),
			Help: "--out is the NDJSON copy of the results, --html the HTML report: give them different files"}
	}
	switch {
	case format == "html" && o.out != "" && o.html == "":
		fmt.Fprintf(errOut, "iolens: -o html --out FILE is deprecated: use --html FILE (--out is the NDJSON copy of the results); writing the page to %s\n", o.out)
		o.html, o.out, o.pageOnly = o.out, "", true
	case renamed && o.out != "" && format != "ndjson":
		fmt.Fprintf(errOut, "iolens: --out %s is the NDJSON copy of the results; the %s report goes to standard output (--html FILE writes the HTML report)\n", o.out, format)
	}
	return nil
}

// openCopy resolves the files for a command that runs tests (run,
// diagnose) and opens --out, to which each result is appended as it
// completes; the returned writer is nil without --out.
func (o *outputFiles) openCopy(format string, errOut io.Writer) (io.Writer, func(), error) {
	if err := o.resolve(format, errOut, false); err != nil {
		return nil, nil, err
	}
	return openOut(o.out)
}

// stdout reports whether the report still goes to standard output.
func (o *outputFiles) stdout() bool { return !o.pageOnly }

// writeHTML writes the page to --html, if given.
func (o *outputFiles) writeHTML(write func(io.Writer) error) error {
	if o.html == "" {
		return nil
	}
	return report.WriteOut(io.Discard, o.html, write)
}

// writeCopy writes rs to --out as NDJSON, if given, replacing the file
// (commands that re-read saved results; run and diagnose append as each
// result completes).
func (o *outputFiles) writeCopy(rs []result.Result) error {
	if o.out == "" {
		return nil
	}
	return report.WriteOut(io.Discard, o.out, func(w io.Writer) error { return report.NDJSON(w, rs) })
}

// format is -o of the commands that print text (or a table) or JSON,
// checked as the flag is parsed.
type format struct {
	v, text string // the value, and the name of the text form
}

func formatFlag(f *pflag.FlagSet, text, usage string) *format {
	o := &format{v: text, text: text}
	f.VarP(o, "output", "o", usage)
	return o
}

func (o *format) Set(s string) error {
	if s != o.text && s != "json" {
		return hint.Wrap(fmt.Errorf("want %s or json", o.text), "valid formats: "+o.text+", json")
	}
	o.v = s
	return nil
}

func (o *format) String() string { return o.v }
func (o *format) Type() string   { return "format" }

// print writes v as indented JSON with -o json, and calls text otherwise.
func (o *format) print(w io.Writer, v any, text func() error) error {
	if o.v == "json" {
		return writeJSON(w, v)
	}
	return text()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
