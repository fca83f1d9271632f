package promql

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Matcher is one label matcher of a series selector: name op "value".
type Matcher struct {
	Name, Op, Value string
}

// Selector is a set of label matchers, printed the way PromQL reads them.
// It is built from parsed or given parts and printed with every value
// quoted again, so nothing a user typed reaches a query unquoted.
type Selector []Matcher

// SelectorError is a --match value that is not a label selector.
type SelectorError struct {
	Value, Why string
}

func (e *SelectorError) Error() string { return fmt.Sprintf("selector %q: %s", e.Value, e.Why) }

// Hint shows the form a selector takes.
func (e *SelectorError) Hint() string {
	return `a label selector such as '{instance="node-1:9100"}' or '{job="node", node=~"worker-.*"}'`
}

// maxSelector bounds what ParseSelector reads: a selector is typed, not
// generated.
const maxSelector = 4096

// ParseSelector reads a label selector: {name op "value", ...} with the
// operators =, !=, =~ and !~, and values in double or single quotes or
// backquotes. The braces may be left out. __name__ is refused: iolens
// names the metrics it reads, and a regular expression is checked the
// way Prometheus compiles it (RE2, anchored).
func ParseSelector(s string) (Selector, error) {
	bad := func(why string) error { return &SelectorError{Value: s, Why: why} }
	if len(s) > maxSelector {
		return nil, bad(fmt.Sprintf("longer than %d bytes", maxSelector))
	}
	if !utf8.ValidString(s) {
		return nil, bad("not UTF-8")
	}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") {
		if !strings.HasSuffix(t, "}") {
			return nil, bad("no closing '}'")
		}
		t = t[1 : len(t)-1]
	}
	var out Selector
	for {
		t = strings.TrimSpace(t)
		if t == "" {
			break
		}
		i := 0
		for i < len(t) && (t[i] == '_' || t[i] >= 'a' && t[i] <= 'z' || t[i] >= 'A' && t[i] <= 'Z' || i > 0 && t[i] >= '0' && t[i] <= '9') {
			i++
		}
		name := t[:i]
		if name == "" {
			return nil, bad(fmt.Sprintf("a label name is expected at %q", clip(t)))
		}
		if name == "__name__" {
			return nil, bad("__name__ cannot be matched: iolens chooses the metrics")
		}
		t = strings.TrimSpace(t[i:])
		op := ""
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(t, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, bad(fmt.Sprintf("label %s: an operator (=, !=, =~, !~) is expected at %q", name, clip(t)))
		}
		t = strings.TrimSpace(t[len(op):])
		v, rest, err := quoted(t)
		if err != nil {
			return nil, bad(fmt.Sprintf("label %s: %v", name, err))
		}
		if op == "=~" || op == "!~" {
			if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, bad(fmt.Sprintf("label %s: %v", name, err))
			}
		}
		out = append(out, Matcher{Name: name, Op: op, Value: v})
		t = strings.TrimSpace(rest)
		if t == "" {
			break
		}
		if t[0] != ',' {
			return nil, bad(fmt.Sprintf("',' or the end is expected at %q", clip(t)))
		}
		t = t[1:]
	}
	return out, nil
}

// quoted reads a PromQL string literal at the start of s.
func quoted(s string) (v, rest string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("a quoted value is expected")
	}
	q := s[0]
	switch q {
	case '`':
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return "", "", fmt.Errorf("no closing backquote")
		}
		return s[1 : 1+end], s[2+end:], nil
	case '"', '\'':
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case q:
				lit := s[:i+1]
				if q == '\'' {
					// Go unquotes single-quoted runes only: re-quote.
					lit = `"` + strings.ReplaceAll(strings.ReplaceAll(s[1:i], `\'`, `'`), `"`, `\"`) + `"`
				}
				v, err := strconv.Unquote(lit)
				if err != nil {
					return "", "", fmt.Errorf("bad escape in %s", clip(s[:i+1]))
				}
				return v, s[i+1:], nil
			}
		}
		return "", "", fmt.Errorf("no closing quote")
	}
	return "", "", fmt.Errorf("a quoted value is expected at %q", clip(s))
}

// With returns the selector and one more matcher.
func (s Selector) With(name, op, value string) Selector {
	out := make(Selector, 0, len(s)+1)
	out = append(out, s...)
	return append(out, Matcher{Name: name, Op: op, Value: value})
}

// Has reports whether a matcher names label.
func (s Selector) Has(label string) bool {
	for _, m := range s {
		if m.Name == label {
			return true
		}
	}
	return false
}

// String prints the selector's matchers, without braces, each value
// quoted as a Go string (which PromQL reads the same way).
func (s Selector) String() string {
	parts := make([]string, len(s))
	for i, m := range s {
		parts[i] = m.Name + m.Op + strconv.Quote(m.Value)
	}
	return strings.Join(parts, ",")
}

// Braced prints the selector with its braces.
func (s Selector) Braced() string { return "{" + s.String() + "}" }

// Of prints metric{selector}.
func (s Selector) Of(metric string) string { return metric + s.Braced() }

// Alternatives is a regular expression matching exactly the given values.
func Alternatives(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = regexp.QuoteMeta(v)
	}
	sort.Strings(q)
	return strings.Join(q, "|")
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// Matches applies the selector to a label set as Prometheus does: a
// missing label is the empty string, regular expressions are anchored.
func (s Selector) Matches(l map[string]string) bool {
	for _, m := range s {
		v := l[m.Name]
		switch m.Op {
		case "=":
			if v != m.Value {
				return false
			}
		case "!=":
			if v == m.Value {
				return false
			}
		case "=~", "!~":
			re, err := regexp.Compile("^(?:" + m.Value + ")$")
			if err != nil || re.MatchString(v) != (m.Op == "=~") {
				return false
			}
		}
	}
	return true
}
