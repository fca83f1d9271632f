package promhist

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"testing"
	"time"
)

// answerRT answers every request with one body.
type answerRT struct {
	status int
	body   []byte
}

func (a answerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

// FuzzRangeAnswer feeds any body, as a 200, 400 or 422 answer, through
// the client and the response parser: an error or columns within the
// bounds, never a panic.
func FuzzRangeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"a","device":"sda"},"values":[[1000,"1"],[1001,"NaN"],[1002,"+Inf"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1000.5,"1"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1001,"1"],[1000,"2"]]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`,
		`{"status":"success","warnings":["partial response"],"data":{"resultType":"matrix","result":[]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"histograms":[[1000,{"count":"1","sum":"1","buckets":[]}]]}]}}`,
		`<html>`, `{}`, `null`, ``,
	} {
		for _, code := range []int{200, 400, 422} {
			f.Add(code, []byte(s))
		}
	}
	g := grid{start: time.Unix(1000, 0), step: time.Second, n: 3}
	f.Fuzz(func(t *testing.T, code int, body []byte) {
		if code < 100 || code > 599 {
			code = 200
		}
		hc := &http.Client{Transport: &bounded{next: answerRT{code, body}, max: 1 << 20}}
		c, err := newClientWith("http://127.0.0.1:9090", hc, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		cols, warns, err := c.rangeQuery(t.Context(), "up", g, 4)
		if err != nil {
			return
		}
		if len(cols) > 4 || len(warns) > maxWarnings+1 {
			t.Fatalf("%d columns, %d warnings beyond the bounds", len(cols), len(warns))
		}
		for _, col := range cols {
			if len(col.v) != g.n {
				t.Fatalf("a column of %d points on a grid of %d", len(col.v), g.n)
			}
			for _, v := range col.v {
				if math.IsInf(v, 0) {
					t.Fatal("an infinite value kept")
				}
			}
		}
	})
}
