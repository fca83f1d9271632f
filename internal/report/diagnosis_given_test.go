package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
)

// diagnose builds its diagnosis once and every format writes that one:
// a verdict line only the given diagnosis has shows in each, so none of
// them built its own.
func TestDiagnosisWrittenAsGiven(t *testing.T) {
	rs := fioTestdata(t, "steadystate_iops20pct.json")
	analysis.Annotate(rs)
	d := Diagnose(rs, nil)
	const mark = "verdict-as-given-7f3a"
	d.Verdict = append(d.Verdict, mark)
	d.Unknown = append(d.Unknown, "unknown-as-given-7f3a")
	for _, format := range []string{"text", "md", "html", "json"} {
		var buf bytes.Buffer
		if err := WriteDiagnosis(&buf, format, d, rs); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, want := range []string{mark, "unknown-as-given-7f3a"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s: the report lacks %q of the given diagnosis", format, want)
			}
		}
	}
	var buf bytes.Buffer
	if err := DiagnosisText(&buf, rs, d, true); err != nil || !strings.Contains(buf.String(), mark) {
		t.Errorf("verbose text: %v, lacks the given verdict", err)
	}
	buf.Reset()
	if err := DiagnosisHTML(&buf, rs, d); err != nil || !strings.Contains(buf.String(), mark) {
		t.Errorf("html: %v, lacks the given verdict", err)
	}
}
