package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
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

// A table pads each row to its widest name: one huge name read back (a
// record is hostile input) would pad every row of the results and repeats
// tables to its size, a hundred rows of a megabyte each. The name is
// clipped in the tables; the other rows keep their width.
func TestHugeNameClippedInTables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "randread_4k_qd8.jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	one, err := ReadResults(bytes.NewReader(b), "r.json")
	if err != nil || len(one) != 1 {
		t.Fatalf("%d results, %v", len(one), err)
	}
	huge := strings.Repeat("y", 100000)
	rs := []result.Result{one[0], one[0], one[0], one[0]}
	for i := range rs {
		rs[i].Test.Name = "short"
		if i < 2 {
			rs[i].Test.Name = huge
		}
		rs[i].Repeat = i%2 + 1
	}
	var out bytes.Buffer
	if err := Text(&out, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || (f[0] != "short" && !strings.HasPrefix(f[0], "yyy")) {
			continue
		}
		rows++
		if n := utf8.RuneCountInString(l); n > 2*maxCell+100 {
			t.Errorf("a table row is %d characters: %.120q", n, l)
		}
		if strings.HasPrefix(f[0], "yyy") && f[0] != strings.Repeat("y", maxCell-1)+"…" {
			t.Errorf("the huge name is %d characters in its cell, want %d ending in an ellipsis", utf8.RuneCountInString(f[0]), maxCell)
		}
	}
	if rows < 6 {
		t.Errorf("%d table rows found, want 4 results and 2 repeats rows:\n%.3000s", rows, out.String())
	}
}
