package promql

import (
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in, want string // want: the selector printed, or the error's words
		ok       bool
	}{
		{`{instance="node-1:9100"}`, `instance="node-1:9100"`, true},
		{`instance="a", job!="b"`, `instance="a",job!="b"`, true},
		{" { node =~ `worker-\\d+` , x !~ 'a|b' } ", `node=~"worker-\\d+",x!~"a|b"`, true},
		{`{node=~'worker-\d+'}`, "bad escape", false}, // as in PromQL: a regexp's \d is \\d in quotes
		{`{a="quote \" and \\ back"}`, `a="quote \" and \\ back"`, true},
		{`{a="b",}`, `a="b"`, true},
		{`{}`, ``, true},
		{`{a="b"`, "no closing", false},
		{`{a}`, "an operator", false},
		{`{a=b}`, "a quoted value", false},
		{`{a="b" c="d"}`, "',' or the end", false},
		{`{a=~"("}`, "missing closing", false},
		{`{__name__="up"}`, "iolens chooses the metrics", false},
		{`{1a="b"}`, "a label name", false},
		{`{a="\q"}`, "bad escape", false},
		{`{a="b`, "no closing", false},
		{strings.Repeat("a", 5000), "longer than", false},
	}
	for _, tc := range tests {
		sel, err := ParseSelector(tc.in)
		if tc.ok {
			if err != nil || sel.String() != tc.want {
				t.Errorf("%s: %s, %v; want %s", tc.in, sel, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.in, err, tc.want)
		} else if err.(*SelectorError).Hint() == "" {
			t.Errorf("%s: no hint", tc.in)
		}
	}
}

func TestMatches(t *testing.T) {
	sel, err := ParseSelector(`{instance=~"node-[12]:9100", device!="sda", job!~"other|x", zone=""}`)
	if err != nil {
		t.Fatal(err)
	}
	for l, want := range map[string]bool{
		"instance=node-1:9100 device=sdb job=node":        true,
		"instance=node-3:9100 device=sdb job=node":        false,
		"instance=node-1:9100 device=sda job=node":        false,
		"instance=node-2:9100 device=sdb job=other":       false,
		"instance=node-2:9100 device=sdb job=node zone=a": false,
		"instance=xnode-1:9100 device=sdb":                false,
	} {
		m := map[string]string{}
		for _, kv := range strings.Fields(l) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		if sel.Matches(m) != want {
			t.Errorf("%s: %v, want %v", l, !want, want)
		}
	}
	if got := Alternatives([]string{"sdb", "dm-0", "a.b"}); got != `a\.b|dm-0|sdb` {
		t.Errorf("Alternatives: %s", got)
	}
}

// FuzzSelector: whatever --match says, a selector prints back as one that
// parses to itself, so no value leaves its quotes.
func FuzzSelector(f *testing.F) {
	for _, s := range []string{`{instance="node-1:9100"}`, `{job="node", node=~"worker-.*"}`, `instance!='a\'b'`, "{a=`x\"y`}",
		`{a="\u00e9\n\"}"}`, `{a=~"("}`, `{__name__="x"}`, `{a="b",}`, `{a="b" c="d"}`, `{}`, `a`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		again, err := ParseSelector(sel.Braced())
		if err != nil {
			t.Fatalf("%q parsed to %s, which does not parse: %v", s, sel.Braced(), err)
		}
		if len(again) != len(sel) {
			t.Fatalf("%q: %d matchers, then %d", s, len(sel), len(again))
		}
		for i := range sel {
			if sel[i] != again[i] {
				t.Fatalf("%q: %+v, then %+v", s, sel[i], again[i])
			}
		}
		for _, m := range sel {
			if m.Name == "__name__" {
				t.Fatalf("%q: __name__ got through", s)
			}
		}
	})
}
