package pipeline

import (
	"context"
	"fmt"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

// Keeper saves results (store.Keeper). Its errors are not fatal: a result
// it could not save yet is its own to retry.
type Keeper interface {
	Add(ctx context.Context, r result.Result) error
}

// Encoder writes one result (result.Encoder for NDJSON, the agent's frame
// writer).
type Encoder interface {
	Encode(r *result.Result) error
}

// Sink takes the results of one run as they complete.
type Sink struct {
	// Expect adds findings that compare a result with what its disk
	// should deliver (nil: none known).
	Expect func(*result.Result)
	// Analysis analyses each result with the run's earlier ones (nil
	// when results arrive analysed, as from the agent).
	Analysis *analysis.Session
	// Keep saves each result to the history (nil: --no-save).
	Keep Keeper
	// Warn hears what Keep could not do yet (nil: ignored).
	Warn func(r *result.Result, err error)
	// Out receives every result: an --out file, stdout when streaming,
	// frames to the pod log. An error here stops the run: the result
	// could not be delivered.
	Out []Encoder
	// Collect keeps every result for the report at the end.
	Collect bool
	// Diagnose builds the diagnosis of each run and target at the end
	// (diagnosis.Of; nil: none, as the agent, whose reports are drawn
	// where its results land).
	Diagnose func(rs []result.Result, unknown []string) diagnosis.Diagnosis

	results []result.Result
}

// Add passes r through every stage.
func (s *Sink) Add(ctx context.Context, r result.Result) error {
	if s.Expect != nil {
		s.Expect(&r)
	}
	if s.Analysis != nil {
		s.Analysis.Add(&r)
	}
	if s.Keep != nil {
		if err := s.Keep.Add(ctx, r); err != nil && s.Warn != nil {
			s.Warn(&r, err)
		}
	}
	for _, e := range s.Out {
		if err := e.Encode(&r); err != nil {
			return fmt.Errorf("writing the result of %s: %w", r.Test.Name, err)
		}
	}
	if s.Collect {
		s.results = append(s.results, r)
	}
	return nil
}

// markInterrupted marks the last collected result as that of a run
// stopped part way, and saves it again, when the signal came between two
// tests (a test it cut is marked where it ends): the history and every
// report then say the run is partial. The NDJSON copies keep the result
// as it came.
func (s *Sink) markInterrupted(ctx context.Context) {
	if len(s.results) == 0 {
		return
	}
	for i := range s.results {
		if s.results[i].Interrupted() {
			return
		}
	}
	last := &s.results[len(s.results)-1]
	last.Notes = append(last.Notes, result.NoteInterrupted)
	if s.Keep != nil {
		if err := s.Keep.Add(ctx, *last); err != nil && s.Warn != nil {
			s.Warn(last, err)
		}
	}
}

// Results are the collected results, in the order they came.
func (s *Sink) Results() []result.Result { return s.results }

// Revise reads the limits of the collected results again off the disk
// model of the whole run (each was read against the results before it as
// it came), and saves again, in place, those whose findings changed. The
// NDJSON copies keep what each result said when it completed; 'iolens
// analyze' reads them again the same way.
func (s *Sink) Revise(ctx context.Context) {
	if len(s.results) == 0 {
		return
	}
	before := make([][]result.Finding, len(s.results))
	for i := range s.results {
		before[i] = s.results[i].Findings
	}
	analysis.Revise(s.results)
	if s.Keep == nil {
		return
	}
	for i := range s.results {
		if sameFindings(s.results[i].Findings, before[i]) {
			continue
		}
		if err := s.Keep.Add(ctx, s.results[i]); err != nil && s.Warn != nil {
			s.Warn(&s.results[i], err)
		}
	}
}

// sameFindings says two lists of findings say the same.
func sameFindings(a, b []result.Finding) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Code != b[i].Code || a[i].Dir != b[i].Dir || a[i].Severity != b[i].Severity || a[i].Summary != b[i].Summary {
			return false
		}
	}
	return true
}
