package compare

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
)

// OperandError is an operand that names nothing to compare. Usage says
// the operand is malformed (a selector that does not parse); Hint says
// what to do.
type OperandError struct {
	Err    error
	Advice string
	Usage  bool
}

func (e *OperandError) Error() string { return e.Err.Error() }
func (e *OperandError) Unwrap() error { return e.Err }

// Hint says what to give instead (hint.Of reads it).
func (e *OperandError) Hint() string { return e.Advice }

// Resolve reads each operand: an existing file (or "-", stdin) through
// read, a label selector over the history, or a saved run id. open opens
// the history, once, only when an operand needs it; Resolve closes it.
func Resolve(ctx context.Context, args []string, read func(ctx context.Context, path string) ([]result.Result, error), open func() (*store.Store, error)) ([]Operand, error) {
	var s *store.Store
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	history := func() error {
		if s != nil {
			return nil
		}
		var err error
		s, err = open()
		return err
	}
	var ops []Operand
	for _, a := range args {
		var rs []result.Result
		var err error
		if _, statErr := os.Stat(a); statErr == nil || a == "-" {
			rs, err = read(ctx, a)
		} else if store.LooksLikeSelector(a) {
			sel, perr := store.ParseSelector(a)
			if perr != nil {
				return nil, &OperandError{Err: perr, Advice: "a selector is key=value,key!=value,key,!key", Usage: true}
			}
			if err = history(); err == nil {
				rs, err = s.Select(ctx, sel)
			}
			if err == nil && len(rs) == 0 {
				err = &OperandError{Err: fmt.Errorf("selector %q matches no saved result", a), Advice: "'iolens history' lists the runs and their labels"}
			}
		} else {
			if err = history(); err == nil {
				rs, err = s.Results(ctx, a)
			}
			if err == nil {
				ops = append(ops, Operand{Name: a, Label: RunLabel(rs), Results: rs})
				continue
			}
			if errors.Is(err, store.ErrNotFound) {
				err = &OperandError{Err: fmt.Errorf("%q is neither a file, a label selector nor a saved run", a), Advice: "'iolens history' lists the saved runs"}
			}
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, Operand{Name: a, Results: rs})
	}
	return ops, nil
}

// RunLabel says what a saved run measured, for a reader who does not
// know its id: its suite, the disk (emulated, expected or the device)
// and the target (an emulated disk's own), and when it started, e.g.
// "diagnose of azure:P15 on /mnt/data, 2026-11-26 17:47".
func RunLabel(rs []result.Result) string {
	if len(rs) == 0 {
		return ""
	}
	r := rs[0]
	t := r.Target
	disk := t.Device
	switch {
	case t.Emulated != "":
		disk = "emulated " + t.Emulated
	case t.Labels["expect"] != "":
		disk = t.Labels["expect"]
	}
	s := r.Suite
	if disk != "" {
		s += " of " + disk
	}
	if t.Path != "" && t.Kind != "device" && t.Emulated == "" {
		s += " on " + t.Path
	}
	if !r.Start.IsZero() {
		s += ", " + r.Start.UTC().Format("2006-01-02 15:04")
	}
	return s
}

// Complete refuses an operand holding an interrupted run, whose figures
// stop part way: a comparison with it would read a half-run as a disk
// that got slower or faster. The refusal is a usage *OperandError.
func Complete(ops []Operand) error {
	for _, op := range ops {
		if st := result.StatusOfResults(op.Results); st.State == result.RunInterrupted {
			return &OperandError{Err: fmt.Errorf("%s was interrupted (%s): its figures are partial", op.Title(), st.Reason), Usage: true,
				Advice: "compare complete runs ('iolens history' shows each run's status), or add --allow-partial to compare it anyway"}
		}
	}
	return nil
}

// AllResults are every operand's results, operand after operand.
func AllResults(ops []Operand) []result.Result {
	var all []result.Result
	for _, op := range ops {
		all = append(all, op.Results...)
	}
	return all
}

// Diagnose gives each operand its diagnosis (diagnosis.Saved) and its
// findings as stories lists them (report.Stories).
func Diagnose(ops []Operand, stories func([]result.Result, *diagnosis.Diagnosis) []Story) {
	for i := range ops {
		d := diagnosis.Saved(ops[i].Results)
		ops[i].Diagnosis, ops[i].Stories = &d, stories(ops[i].Results, &d)
	}
}
