package compare_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
)

// An operand whose run was interrupted is refused as a usage mistake
// that names it and --allow-partial; complete ones pass, and AllResults
// keeps every operand's results in order.
func TestComplete(t *testing.T) {
	done := compare.Operand{Name: "a", Results: []result.Result{{Status: "ok", RunID: "t1"}}}
	cut := compare.Operand{Name: "b", Label: "run b", Results: []result.Result{{Status: "ok", RunID: "t2", Notes: []string{result.NoteInterrupted}}}}
	if err := compare.Complete([]compare.Operand{done, done}); err != nil {
		t.Errorf("complete runs: %v", err)
	}
	err := compare.Complete([]compare.Operand{done, cut})
	var oe *compare.OperandError
	if !errors.As(err, &oe) || !oe.Usage || !strings.Contains(err.Error(), "run b was interrupted") || !strings.Contains(hint.Of(err), "--allow-partial") {
		t.Errorf("interrupted operand: %v (hint %q)", err, hint.Of(err))
	}
	all := compare.AllResults([]compare.Operand{done, cut})
	if len(all) != 2 || all[0].RunID != "t1" || all[1].RunID != "t2" {
		t.Errorf("AllResults = %+v", all)
	}
}
