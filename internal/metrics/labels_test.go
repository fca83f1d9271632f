package metrics

import (
	"errors"
	"testing"
)

func TestCheckLabelKeys(t *testing.T) {
	for _, c := range []struct {
		sets []map[string]string
		ok   bool
	}{
		{[]map[string]string{{"storage-class": "x", "team": "y"}}, true},
		{[]map[string]string{{"a-b": "1"}, {"a-b": "2"}}, true}, // one key, many runs
		{[]map[string]string{{"a-b": "1", "a_b": "2"}}, false},
		{[]map[string]string{{"a-b": "1"}, {"a.b": "2"}}, false},
		{[]map[string]string{{"a/b": "1"}, {"a_b": "2"}}, false},
		{[]map[string]string{{"1a": "1"}, {"_a": "2"}}, false},
	} {
		err := CheckLabelKeys(c.sets...)
		var le *LabelClashError
		if (err == nil) != c.ok || err != nil && (!errors.As(err, &le) || le.Hint() == "") {
			t.Errorf("%v: %v, want ok=%v", c.sets, err, c.ok)
		}
	}
}
