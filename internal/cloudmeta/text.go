package cloudmeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseError is a response iolens cannot read as the provider documents it.
type parseError struct {
	What string // "Azure IMDS instance document"
	Why  string
}

func (e *parseError) Error() string { return fmt.Sprintf("unreadable %s: %s", e.What, e.Why) }

// decodeJSON reads one JSON document. A value of the wrong type is
// skipped (encoding/json fills the rest and reports the first such
// value), so one odd field does not cost the whole answer; broken JSON
// and trailing data are errors.
func decodeJSON(what string, b []byte, v any) (skipped string, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err = dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		skipped = fmt.Sprintf("%s: %s is not a %s", what, te.Field, te.Type)
	case err != nil:
		return "", &parseError{What: what, Why: shorten(err.Error())}
	}
	if dec.More() {
		return "", &parseError{What: what, Why: "more than one JSON value"}
	}
	return skipped, nil
}

// flexString takes a JSON string, number or boolean as text: Azure IMDS
// sends every primitive as a string, a fake or an older service may not.
// Objects and arrays leave it empty.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil
		}
		*f = flexString(s)
	case '{', '[', 'n':
		*f = ""
	default:
		*f = flexString(b)
	}
	return nil
}

// text returns the value when it is printable and short enough to show
// in a report; ok is false otherwise (control characters, terminal
// escapes, invalid UTF-8, over max bytes).
func text(s string, max int) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > max || !utf8.ValidString(s) {
		return "", false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", false
		}
	}
	return s, true
}

// name returns the value when it is a plain identifier: letters, digits
// and . _ - (VM sizes, zones, device names). Such a value may go into a
// file path, so nothing else passes.
func name(s string, max int) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > max || s[0] == '.' || s[0] == '-' {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", false
		}
	}
	return s, true
}

// count reads a non-negative decimal integer no larger than max. Signs,
// exponents, hex and fractions are refused: a figure in a metadata
// document is a plain count.
func count(s string, max int64) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > max {
		return 0, false
	}
	return v, true
}

// number reads a finite non-negative decimal (integers or with a
// fraction) no larger than max.
func number(s string, max float64) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 32 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v > max {
		return 0, false
	}
	return v, true
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
