package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/iolens/iolens/internal/diagnosis"
)

// A tab in a test's name (a record is hostile input) is a cell of its
// own to a tab-aligned table: the name would spill into the direction
// column and every figure after it would sit under the wrong heading. The
// results table and the repeats table each print the name as one cell.
func TestTabInNameStaysInItsCell(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "randread_4k_qd8.jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	one, err := ReadResults(bytes.NewReader(b), "r.json")
	if err != nil || len(one) != 1 {
		t.Fatalf("%d results, %v", len(one), err)
	}
	rs := append(one, one[0], one[0])
	for i := range rs {
		rs[i].Test.Name = "evil\tname"
		rs[i].Repeat = i + 1
	}
	var out bytes.Buffer
	if err := Text(&out, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table string
		row   *regexp.Regexp
	}{
		{"results", regexp.MustCompile(`(?m)^ *evil name #1  read  `)},
		{"repeats", regexp.MustCompile(`(?m)^  evil name  read  3  `)},
	} {
		if !c.row.MatchString(out.String()) {
			t.Errorf("the %s table has no row with the name as one cell:\n%s", c.table, out.String())
		}
	}
}
