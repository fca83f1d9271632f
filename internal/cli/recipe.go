package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/pipeline"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// recipe is what every command that runs tests does around its driver
// (run, diagnose, k8s run, k8s diagnose, k8s node-check), the same way
// for each: the report format checked, every output file checked and
// --out opened before the first IO, the history and live metrics kept,
// the expectation defaulted, the results streamed with -o ndjson, the
// --until-steady note, the HTML page and the report written from the
// outcome, and the exit status.
type recipe struct {
	output  string
	formats report.Registry
	files   *outputFiles
	save    *runSaveOptions
	reads   reads
	verbose bool
	// untilSteady notes at the end how many tests ended steady.
	untilSteady bool
	// expect adds expectation findings (--expect); nil: defaultExpect's.
	expect        func(*result.Result)
	defaultExpect func() func(*result.Result)
	// render writes the report instead of the format's writer (k8s
	// diagnose's comparison of the nodes).
	render report.Renderer
	// ioErrorsFail: a disk that returned IO errors fails the check.
	ioErrorsFail bool
}

// progressLine is a run's progress drawing: progress.Run, or progress.Log for
// a Kubernetes run.
type progressLine interface {
	Line(format string, args ...any)
	Done()
}

// checkFormat checks -o before anything else.
func (rc *recipe) checkFormat() error {
	if _, err := rc.formats.Lookup(rc.output); err != nil {
		return &UsageError{Err: err, Help: hint.Of(err)}
	}
	return nil
}

// run opens what keeps the run's results, runs drive through the sink,
// and writes the outcome. header, once --out is open, says what starts.
// It returns the outcome, the driver's error, and its own (an output
// that failed, IO errors): the caller turns the driver's into the exit
// status.
func (rc *recipe) run(ctx context.Context, streams IOStreams, prog progressLine, runID, suite string, labels map[string]string,
	header func(), drive func(snk *pipeline.Sink, keeper *pipeline.Run) (diagnosis.Outcome, error)) (diagnosis.Outcome, error, error) {
	out, err := rc.files.openCopy(rc.output, streams.ErrOut, rc.reads)
	if err != nil {
		return diagnosis.Outcome{}, nil, err
	}
	defer out.Close()
	defer prog.Done()
	header()
	keeper, err := rc.save.start(ctx, streams, runID, suite, labels)
	if err != nil {
		return diagnosis.Outcome{}, nil, err
	}
	defer keeper.Close()
	expect := rc.expect
	if expect == nil && rc.defaultExpect != nil {
		expect = rc.defaultExpect()
	}
	snk := keeper.Sink(expect, copyWriter(out))
	stream := rc.output == "ndjson"
	if stream {
		ndjson, err := report.Results.Lookup("ndjson")
		if err != nil {
			return diagnosis.Outcome{}, nil, err
		}
		snk.Out = append(snk.Out, result.NewEncoder(reportOut(streams.Out, ndjson)))
	}
	outcome, runErr := drive(snk, keeper)
	if note := analysis.UntilSteadyNote(outcome.Results); rc.untilSteady && note != "" {
		prog.Line("%s", note)
	}
	prog.Done()
	keeper.Report(ctx, streams.ErrOut)
	outErr := out.Close()
	if len(outcome.Results) > 0 {
		outErr = errors.Join(outErr, rc.files.writeHTML(report.Results, report.Input{Outcome: outcome}))
		// The report comes whatever became of the files.
		if !stream && rc.files.stdout() {
			if err := rc.write(streams.Out, outcome); err != nil {
				return outcome, runErr, err
			}
		}
	}
	switch d := outcome.Diagnosis(); {
	case outErr != nil:
		return outcome, runErr, keptAs(outErr, keeper, runID, runErr)
	case rc.ioErrorsFail && d != nil && d.IOErrors != nil:
		// A disk that returned IO errors fails the check, whatever else
		// the run found.
		return outcome, runErr, &hint.Error{Err: checkFailed(fmt.Sprintf("the disk returned IO errors in %d of %d tests", d.IOErrors.Tests, d.IOErrors.Of)),
			Advice: "the verdict names the tests and offsets; the kernel log (dmesg) says which device and sectors"}
	}
	return outcome, runErr, nil
}

// write writes the report of out on w in rc's format, through the
// format's own escaping.
func (rc *recipe) write(w io.Writer, out diagnosis.Outcome) error {
	f, err := rc.formats.Lookup(rc.output)
	if err != nil {
		return err
	}
	if rc.render != nil {
		return rc.render(reportOut(w, f), out)
	}
	return writeReport(w, f, report.Input{Outcome: out, Verbose: rc.verbose})
}

// localStatus is the exit status of a run on this machine: its
// driver's error, or what an interrupted run kept.
func localStatus(ctx context.Context, out diagnosis.Outcome, runErr, err error) error {
	switch {
	case err != nil:
		return err
	case runErr != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted: %d results kept, test files removed", len(out.Results))
	}
	return runErr
}

// keptAs is an output file that failed after the run: the error names
// where the results still are (the run id in the history), and keeps the
// run's own error, if any.
func keptAs(outErr error, keeper *pipeline.Run, runID string, runErr error) error {
	advice := "the report above has the figures; run again with a file you can write, or without --no-save to keep them"
	if keeper.Store != nil {
		advice = fmt.Sprintf("the results are saved as run %s: 'iolens history show %s --html FILE' or 'iolens history export %s --out FILE' writes them again", runID, runID, runID)
	}
	return &hint.Error{Err: errors.Join(outErr, runErr), Advice: advice}
}
