package plan

import "testing"

// TestOverhead: fio's start and stop around a step are learnt as the mean
// of what the steps took beyond their measurement, never less than the
// budget's own allowance, and a step that says nothing (no measurement,
// or less wall time than it measured) is left out.
func TestOverhead(t *testing.T) {
	var o overhead
	if got := o.seconds(); got != overheadS {
		t.Errorf("nothing seen: %.1f s, want the allowance %d s", got, overheadS)
	}
	o.observe(5, 4) // 1 s: below the allowance
	if got := o.seconds(); got != overheadS {
		t.Errorf("1 s seen: %.1f s, want the allowance %d s", got, overheadS)
	}
	o.observe(8, 4) // 4 s on a loaded host
	o.observe(7.5, 3)
	if got, want := o.seconds(), (1.0+4+4.5)/3; got != want {
		t.Errorf("1, 4 and 4.5 s seen: %.3f s, want their mean %.3f", got, want)
	}
	o.observe(3, 4)
	o.observe(10, 0)
	o.observe(-1, 2)
	if got, want := o.seconds(), (1.0+4+4.5)/3; got != want {
		t.Errorf("after steps that say nothing: %.3f s, want %.3f", got, want)
	}
}
