package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
)

// OperandError is an operand that names nothing to compare. Usage says
// the operand is malformed (a selector that does not parse); Hint says
// what to do.
type OperandError struct {
	Err   error
	Hint  string
	Usage bool
}

func (e *OperandError) Error() string { return e.Err.Error() }
func (e *OperandError) Unwrap() error { return e.Err }

// Resolve reads each operand: an existing file (or "-", stdin), a label
// selector over the history, or a saved run id. open opens the history,
// once, only when an operand needs it; Resolve closes it.
func Resolve(ctx context.Context, args []string, stdin io.Reader, open func() (*store.Store, error)) ([]Operand, error) {
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
			rs, err = report.ReadFiles([]string{a}, stdin)
		} else if store.LooksLikeSelector(a) {
			sel, perr := store.ParseSelector(a)
			if perr != nil {
				return nil, &OperandError{Err: perr, Hint: "a selector is key=value,key!=value,key,!key", Usage: true}
			}
			if err = history(); err == nil {
				rs, err = s.Select(ctx, sel)
			}
			if err == nil && len(rs) == 0 {
				err = &OperandError{Err: fmt.Errorf("selector %q matches no saved result", a), Hint: "'iolens history' lists the runs and their labels"}
			}
		} else {
			if err = history(); err == nil {
				rs, err = s.Results(ctx, a)
			}
			if errors.Is(err, store.ErrNotFound) {
				err = &OperandError{Err: fmt.Errorf("%q is neither a file, a label selector nor a saved run", a), Hint: "'iolens history' lists the saved runs"}
			}
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, Operand{Name: a, Results: rs})
	}
	return ops, nil
}
