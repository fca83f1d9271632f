package diagnosis

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.1: an interrupted run's diagnosis says so in its status, and
// its JSON lists what was not established as a list, never null.
func TestStatusAndNotEstablishedList(t *testing.T) {
	rs := []result.Result{{RunID: "r", Status: "ok", Notes: []string{result.NoteInterrupted}}, {RunID: "r", Status: "failed"}}
	d := Build(rs, Options{})
	if d.Status.State != result.RunInterrupted || !d.Interrupted {
		t.Errorf("status %+v interrupted %v", d.Status, d.Interrupted)
	}
	b, err := json.Marshal(Build(nil, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"not_established":[]`) {
		t.Errorf("not_established is not a list: %s", b)
	}
	if d := Build(rs, Options{Interrupted: true}); d.Status.State != result.RunInterrupted {
		t.Errorf("an interrupted option without the note: %+v", d.Status)
	}
}
