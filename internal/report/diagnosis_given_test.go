package report

import (
	"bytes"
	"github.com/iolens/iolens/internal/diagnosis"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// diagnose builds its diagnosis once and every format writes that one:
// a verdict line only the given diagnosis has shows in each, so none of
// them built its own.
func TestDiagnosisWrittenAsGiven(t *testing.T) {
	rs := fioTestdata(t, "steadystate_iops20pct.json")
	analysis.Annotate(rs)
	d := diagnosis.Saved(rs)
	const mark = "verdict-as-given-7f3a"
	d.Verdict = append(d.Verdict, mark)
	d.Unknown = append(d.Unknown, "unknown-as-given-7f3a")
	for _, format := range []string{"text", "md", "html", "json"} {
		var buf bytes.Buffer
		if err := WriteDiagnosis(&buf, format, given(rs, d), false); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, want := range []string{mark, "unknown-as-given-7f3a"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s: the report lacks %q of the given diagnosis", format, want)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteDiagnosis(&buf, "text", given(rs, d), true); err != nil || !strings.Contains(buf.String(), mark) {
		t.Errorf("verbose text: %v, lacks the given verdict", err)
	}
	buf.Reset()
	if err := HTML(&buf, given(rs, d)); err != nil || !strings.Contains(buf.String(), mark) {
		t.Errorf("html: %v, lacks the given verdict", err)
	}
}

// given is the outcome of rs with the diagnosis d, as a run leaves it.
func given(rs []result.Result, d diagnosis.Diagnosis) diagnosis.Outcome {
	return diagnosis.Outcome{Results: rs, Diagnoses: []diagnosis.Diagnosis{d}}
}
