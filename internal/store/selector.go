package store

import (
	"fmt"
	"strings"
)

// Op is how a selector term compares.
type Op string

// Selector operators.
const (
	OpEq     Op = "="
	OpNe     Op = "!="
	OpExists Op = "exists"
	OpAbsent Op = "!exists"
)

// Term is one condition of a selector.
type Term struct {
	Key   string
	Op    Op
	Value string
}

// Selector is a conjunction of terms, written like a Kubernetes label
// selector: "storage-class=managed-premium,zone!=b,cluster,!emulated".
// The keys suite, host, device, target and run match the result's own
// fields instead of labels.
type Selector []Term

// fieldColumns maps the reserved selector keys to columns.
var fieldColumns = map[string]string{
	"suite":  "runs.suite",
	"host":   "runs.hostname",
	"device": "runs.device",
	"target": "runs.target_path",
	"run":    "runs.id",
}

// LooksLikeSelector tells a selector from a run id or a file name: it
// contains '=' or starts with '!'.
func LooksLikeSelector(s string) bool {
	return strings.Contains(s, "=") || strings.HasPrefix(s, "!")
}

// ParseSelector reads a selector. Terms are separated by commas; spaces
// around keys and values are ignored.
func ParseSelector(s string) (Selector, error) {
	var sel Selector
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty selector")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		var t Term
		switch {
		case part == "":
			return nil, fmt.Errorf("selector %q: empty term", s)
		case strings.Contains(part, "!="):
			k, v, _ := strings.Cut(part, "!=")
			t = Term{Key: strings.TrimSpace(k), Op: OpNe, Value: strings.TrimSpace(v)}
		case strings.Contains(part, "="):
			k, v, _ := strings.Cut(part, "=")
			v = strings.TrimPrefix(v, "=") // "==" is "="
			t = Term{Key: strings.TrimSpace(k), Op: OpEq, Value: strings.TrimSpace(v)}
		case strings.HasPrefix(part, "!"):
			t = Term{Key: strings.TrimSpace(part[1:]), Op: OpAbsent}
		default:
			t = Term{Key: part, Op: OpExists}
		}
		if t.Key == "" {
			return nil, fmt.Errorf("selector %q: term %q has no key", s, part)
		}
		if strings.ContainsAny(t.Key, "!=") || strings.ContainsAny(t.Value, "!=") {
			return nil, fmt.Errorf("selector %q: term %q: want key=value, key!=value, key or !key", s, part)
		}
		if _, ok := fieldColumns[t.Key]; ok && (t.Op == OpExists || t.Op == OpAbsent) {
			return nil, fmt.Errorf("selector %q: %s is a field, compare it with = or !=", s, t.Key)
		}
		sel = append(sel, t)
	}
	return sel, nil
}

func (s Selector) String() string {
	parts := make([]string, len(s))
	for i, t := range s {
		switch t.Op {
		case OpExists:
			parts[i] = t.Key
		case OpAbsent:
			parts[i] = "!" + t.Key
		default:
			parts[i] = t.Key + string(t.Op) + t.Value
		}
	}
	return strings.Join(parts, ",")
}

// sql renders the selector as a WHERE clause over results aliased r joined
// with runs.
func (s Selector) sql() (string, []any) {
	if len(s) == 0 {
		return "1", nil
	}
	var conds []string
	var args []any
	for _, t := range s {
		if col, ok := fieldColumns[t.Key]; ok {
			conds = append(conds, col+" "+map[Op]string{OpEq: "=", OpNe: "<>"}[t.Op]+" ?")
			args = append(args, t.Value)
			continue
		}
		const lab = `SELECT 1 FROM result_labels l WHERE l.result_id = r.id AND l.key = ?`
		switch t.Op {
		case OpEq:
			conds = append(conds, `EXISTS (`+lab+` AND l.value = ?)`)
			args = append(args, t.Key, t.Value)
		case OpNe:
			conds = append(conds, `NOT EXISTS (`+lab+` AND l.value = ?)`)
			args = append(args, t.Key, t.Value)
		case OpExists:
			conds = append(conds, `EXISTS (`+lab+`)`)
			args = append(args, t.Key)
		case OpAbsent:
			conds = append(conds, `NOT EXISTS (`+lab+`)`)
			args = append(args, t.Key)
		}
	}
	return strings.Join(conds, " AND "), args
}

// SelectorError is a selector that does not parse.
type SelectorError struct{ Err error }

func (e *SelectorError) Error() string { return e.Err.Error() }
func (e *SelectorError) Unwrap() error { return e.Err }

// Hint says what a selector looks like.
func (e *SelectorError) Hint() string { return "a selector is key=value,key!=value,key,!key" }
