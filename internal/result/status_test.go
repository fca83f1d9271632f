package result

import "testing"

func TestStatusOf(t *testing.T) {
	ok := Result{Status: "ok"}
	bad := Result{Status: "failed", Error: "fio: exit status 1"}
	cut := Result{Status: "ok", Notes: []string{"buffered", NoteInterrupted}}
	cases := []struct {
		name string
		rs   []Result
		want RunStatus
	}{
		{"complete", []Result{ok, ok}, RunStatus{State: RunComplete}},
		{"one failed", []Result{ok, bad, ok}, RunStatus{State: RunPartial, Reason: "1 of 3 tests failed"}},
		{"all failed", []Result{bad, bad}, RunStatus{State: RunFailed, Reason: "all 2 tests failed"}},
		{"interrupted", []Result{ok, cut}, RunStatus{State: RunInterrupted, Reason: "stopped part way; 2 tests kept"}},
		{"interrupted beats failed", []Result{bad, cut}, RunStatus{State: RunInterrupted, Reason: "stopped part way; 2 tests kept, 1 of them failed"}},
		{"nothing", nil, RunStatus{State: RunFailed, Reason: "no results"}},
	}
	for _, c := range cases {
		if got := StatusOfResults(c.rs); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if s := (RunStatus{State: RunPartial, Reason: "1 of 3 tests failed"}).String(); s != "partial: 1 of 3 tests failed" {
		t.Errorf("String: %q", s)
	}
}
