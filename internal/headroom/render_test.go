package headroom_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/iolens/iolens/internal/headroom"
)

func fleetReport(t *testing.T) *headroom.Report {
	t.Helper()
	f := fleet{start: time.Unix(1_790_000_000, 0), step: 15 * time.Second, n: 480}
	_, c := fakeClient(t, f.series())
	r, err := headroom.Run(t.Context(), c, f.options(t))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFormats(t *testing.T) {
	r := fleetReport(t)
	out := map[string]string{}
	for _, f := range []string{"text", "json", "csv", "md", "html"} {
		var b bytes.Buffer
		if err := (headroom.Page{R: r, Loc: time.UTC}).WriteFormat(&b, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.String()
	}
	// Text: the verdict on top, a line per volume under 160 characters,
	// worst first.
	lines := strings.Split(out["text"], "\n")
	if !strings.HasPrefix(lines[1], "verdict: 2 of 7 volumes met their cap") {
		t.Errorf("second line %q", lines[1])
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n >= 160 {
			t.Errorf("a line of %d characters: %s", n, l)
		}
	}
	first := 0
	for first < len(lines) && lines[first] != "" {
		first++
	}
	if first+1 >= len(lines) || !strings.HasPrefix(lines[first+1], "at-cap") || !strings.Contains(lines[first+1], "node-2:9100 sdb") {
		t.Errorf("worst first:\n%s", out["text"])
	}
	// JSON: versioned, unknown shares absent rather than 0.
	var doc struct {
		Schema  string
		Volumes []struct {
			Device string
			Status string
			CapPct *struct{ P99 float64 } `json:"cap_pct"`
			Rec    *struct {
				DeltaUSD *float64 `json:"delta_usd_month"`
			} `json:"recommendation"`
		}
	}
	if err := json.Unmarshal([]byte(out["json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "iolens.headroom/v1" || len(doc.Volumes) != 7 {
		t.Fatalf("json: %s, %d volumes", doc.Schema, len(doc.Volumes))
	}
	for _, v := range doc.Volumes {
		if (v.Status == headroom.StatusUnknown || v.Status == headroom.StatusNoData) && v.CapPct != nil {
			t.Errorf("json: %s %s has a share of an unknown cap", v.Device, v.Status)
		}
	}
	// CSV: a row per volume, unknown cells empty, never 0.
	rows, err := csv.NewReader(strings.NewReader(out["csv"])).ReadAll()
	if err != nil || len(rows) != 8 || len(rows[0]) != len(headroom.CSVHeader) {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, row := range rows[1:] {
		if row[col["status"]] == headroom.StatusNoData && (row[col["cap_pct_p99"]] != "" || row[col["iops_p99"]] != "") {
			t.Errorf("csv: no-data row with figures: %v", row)
		}
		if row[col["status"]] == headroom.StatusUnknown && row[col["cap_pct_p99"]] != "" {
			t.Errorf("csv: unknown cap with a share: %v", row)
		}
	}
	if !strings.Contains(out["md"], "| status | volume |") || !strings.Contains(out["md"], "**Verdict:**") {
		t.Errorf("md:\n%s", out["md"])
	}
	if strings.Count(out["html"], "<svg") != 5+2 {
		t.Errorf("html: %d charts, want one per volume with a known cap and data (5) and node (2)", strings.Count(out["html"], "<svg"))
	}
}

// A label that looks like a formula stays text in CSV; one with markup
// stays text in HTML.
func TestHostileLabels(t *testing.T) {
	r := &headroom.Report{Schema: headroom.Schema, Volumes: []*headroom.Volume{{Instance: "=HYPERLINK(\"x\")", Device: "<script>", Status: headroom.StatusNoData}}}
	var c, h bytes.Buffer
	if err := headroom.CSV(&c, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), "'=HYPERLINK") {
		t.Errorf("csv: %s", c.String())
	}
	if err := headroom.HTML(&h, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.String(), "<script>") {
		t.Error("html carries the label's markup")
	}
}
