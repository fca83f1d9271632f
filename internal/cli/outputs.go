package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/spf13/cobra"
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
	// outFlag names the flag the page came from, for messages.
	htmlFlag string
}

const htmlFlagHelp = "also write the HTML report (one self-contained page) to this file"

func (o *outputFiles) addFlags(f *pflag.FlagSet, outHelp string) {
	f.StringVar(&o.out, "out", "", outHelp)
	f.StringVar(&o.html, "html", "", htmlFlagHelp)
	markOutput(f, "out", "html")
}

// resolve checks the two files against the format on standard output and
// against what the command reads (checkOutputs), before anything is read
// or run. It keeps -o html --out FILE working as it used to (the page in
// FILE), with a note on errOut. renamed says that --out used to name the
// rendered report for any format (report, compare): then the note says
// where the report goes now.
func (o *outputFiles) resolve(format string, errOut io.Writer, renamed bool, r reads) error {
	o.htmlFlag = "--html"
	switch {
	case format == "html" && o.out != "" && o.html == "":
		fmt.Fprintf(errOut, "iolens: -o html --out FILE is deprecated: use --html FILE (--out is the NDJSON copy of the results); writing the page to %s\n", o.out)
		o.html, o.out, o.pageOnly, o.htmlFlag = o.out, "", true, "--out"
	case renamed && o.out != "" && format != "ndjson":
		fmt.Fprintf(errOut, "iolens: --out %s is the NDJSON copy of the results; the %s report goes to standard output (--html FILE writes the HTML report)\n", o.out, format)
	}
	return checkOutputs(r, [2]string{"--out", o.out}, [2]string{o.htmlFlag, o.html})
}

// openCopy resolves the files for a command that runs tests (run,
// diagnose) and opens --out, to which each result is appended as it
// completes; it is nil without --out.
func (o *outputFiles) openCopy(format string, errOut io.Writer, r reads) (*userfile.AppendFile, error) {
	if err := o.resolve(format, errOut, false, r); err != nil {
		return nil, err
	}
	return openOut(o.out)
}

// stdout reports whether the report still goes to standard output.
func (o *outputFiles) stdout() bool { return !o.pageOnly }

// writeHTML writes in to --html, if given, as reg's html format.
func (o *outputFiles) writeHTML(reg report.Registry, in report.Input) error {
	if o.html == "" {
		return nil
	}
	if err := writeFile(o.html, reg, "html", in); err != nil {
		return fmt.Errorf("%s: %w", o.htmlFlag, err)
	}
	return nil
}

// writeCopy writes rs to --out as the results' NDJSON, if given,
// replacing the file (commands that re-read saved results; run and
// diagnose append as each result completes).
func (o *outputFiles) writeCopy(rs []result.Result) error {
	if o.out == "" {
		return nil
	}
	if err := writeFile(o.out, report.Results, "ndjson", report.Input{Outcome: diagnosis.Outcome{Results: rs}}); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// writeFile writes in to the file path as reg's format, through the
// format's own escaping, replacing the file.
func writeFile(path string, reg report.Registry, format string, in report.Input) error {
	f, err := reg.Lookup(format)
	if err != nil {
		return err
	}
	return userfile.Write(path, func(w io.Writer) error { return f.Write(f.To(w, false), in) })
}

// reads are the files a command reads, which none of its outputs may be.
type reads struct {
	// inputs are the files named on the command line; arguments that
	// are no file (run ids, selectors) are passed over.
	inputs []string
	// db is --db; the history database is protected wherever it is,
	// whether the command opens it or not.
	db string
}

// Flag annotations say which flags name files: every flag that names a
// file iolens writes is marked an output (markOutput), every flag that
// names a file it reads an input (markInput). guardOutputs checks them all
// before any command runs, so no output flag can skip the checks.
const (
	outputAnnotation = "iolens/output"
	inputAnnotation  = "iolens/input"
)

// markOutput marks flags that name a file the command writes.
func markOutput(f *pflag.FlagSet, names ...string) {
	for _, n := range names {
		if err := f.SetAnnotation(n, outputAnnotation, []string{"true"}); err != nil {
			panic(err) // a flag that does not exist: a mistake in the code
		}
	}
}

// markInput marks flags that name a file the command reads.
func markInput(f *pflag.FlagSet, names ...string) {
	for _, n := range names {
		if err := f.SetAnnotation(n, inputAnnotation, []string{"true"}); err != nil {
			panic(err)
		}
	}
}

func isMarked(f *pflag.Flag, annotation string) bool {
	_, ok := f.Annotations[annotation]
	return ok
}

// guardOutputs wraps the RunE of c and of every command under it in
// checkOutputFlags.
func guardOutputs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		guardOutputs(sub)
	}
	if c.RunE == nil {
		return
	}
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutputFlags(cmd, args); err != nil {
			return err
		}
		return run(cmd, args)
	}
}

// checkOutputFlags checks every output flag given to cmd before it reads
// or runs anything: each must be a regular file or a new path, never a
// link another user planted in a shared directory, never one of the
// command's inputs (its arguments and input flags), never the history
// database wherever it is (--db, $IOLENS_DB, the default path; its
// journals too, through any link) and never another output.
func checkOutputFlags(cmd *cobra.Command, args []string) error {
	var o userfile.Outputs
	for _, a := range args {
		if _, err := os.Lstat(a); err == nil {
			o.Input("the input "+a, a)
		}
	}
	var outs [][2]string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		v := f.Value.String()
		switch {
		case v == "":
		case isMarked(f, inputAnnotation):
			o.Input("the input "+v+" (--"+f.Name+")", v)
		case isMarked(f, outputAnnotation):
			outs = append(outs, [2]string{"--" + f.Name, v})
		}
	})
	dbs := store.Paths()
	if f := cmd.Flags().Lookup("db"); f != nil && f.Value.String() != "" {
		dbs = append([]string{f.Value.String()}, dbs...)
	}
	registerDB(&o, dbs...)
	for _, out := range outs {
		if err := o.Output(out[0], out[1]); err != nil {
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
	}
	return nil
}

// registerDB registers history databases and their journals as inputs.
func registerDB(o *userfile.Outputs, dbs ...string) {
	for _, db := range dbs {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			o.Input("the history database ("+db+")", db+suffix)
		}
	}
}

// checkOutputs checks a command's output files ({flag, path}; empty
// paths and "-" are standard output) before it reads or runs anything:
// each must be a regular file or a new path in a directory it can write,
// and none may be an input, the history database (or its journal) or
// another output, whatever the spelling (./x, symbolic or hard links).
func checkOutputs(r reads, outs ...[2]string) error {
	var o userfile.Outputs
	for _, p := range r.inputs {
		o.Input("the input "+p, p)
	}
	dbs := store.Paths()
	if r.db != "" {
		dbs = append([]string{r.db}, dbs...)
	}
	registerDB(&o, dbs...)
	for _, out := range outs {
		if err := o.Output(out[0], out[1]); err != nil {
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
	}
	return nil
}

// writeTo writes to the file path through userfile.Write, or to w when
// path is "" or "-".
func writeTo(w io.Writer, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(w)
	}
	return userfile.Write(path, write)
}

// openOut opens --out for appending (nil when path is empty).
func openOut(path string) (*userfile.AppendFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := userfile.Append(path)
	if err != nil {
		return nil, &hint.Error{Err: fmt.Errorf("--out: %w", err), Advice: "give a regular file or a new path"}
	}
	return f, nil
}

// copyWriter is f as the io.Writer a sink takes: nil without --out.
func copyWriter(f *userfile.AppendFile) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

// format is -o of a command that lists or shows what is drawn above
// report (a report.Listing): its formats are reg's, checked as the flag
// is parsed; the first is the default.
type format struct {
	v   string
	reg report.Registry
}

func formatFlag(f *pflag.FlagSet, reg report.Registry, usage string) *format {
	o := &format{v: reg.Formats[0].Name, reg: reg}
	f.VarP(o, "output", "o", usage+strings.Join(reg.Names(), ", "))
	_ = f.SetAnnotation("output", formatsAnnotation, []string{reg.Kind})
	return o
}

func (o *format) Set(s string) error {
	f, err := o.reg.Lookup(s)
	if err != nil {
		return err
	}
	o.v = f.Name
	return nil
}

func (o *format) String() string { return o.v }
func (o *format) Type() string   { return "format" }

// print writes v in the format chosen: the registry's JSON encodes v,
// and its first format (text, or a table) is text.
func (o *format) print(w io.Writer, v any, text func(io.Writer) error) error {
	return o.write(w, report.Listing{Value: v, Forms: map[string]func(io.Writer) error{o.reg.Formats[0].Name: text}})
}

// write writes l in the format chosen.
func (o *format) write(w io.Writer, l report.Listing) error {
	f, err := o.reg.Lookup(o.v)
	if err != nil {
		return err
	}
	return writeReport(w, f, report.Input{Listing: l})
}

// warnSkipped says which lines of an input were passed over, and why.
func warnSkipped(w io.Writer) func(error) {
	return func(err error) { fmt.Fprintf(w, "iolens: warning: %v\n", err) }
}
