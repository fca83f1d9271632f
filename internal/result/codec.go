package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// Schemas of the result record. Readers take every version listed here
// and upgrade it on read; a record of any other version is refused.
const (
	SchemaV1 = "iolens.result/v1"
	// schemaV2 added findings' code (replacing v1's numeric "verdict"
	// evidence) and dir.
	schemaV2 = "iolens.result/v2"
	// schemaV3 added trim and mixed, fio's own figures beside them (fio:
	// CPU, the jobs and hosts a result sums, steady state, latency
	// target) and each direction's total latency, so that nothing reads
	// fio_json again; one fio document is kept once per input.
	schemaV3 = "iolens.result/v3"
	// Schema is the version this iolens writes.
	Schema = schemaV3
)

// MaxRecordBytes bounds one record as read: an NDJSON line, an element of
// a JSON array, or one fio JSON document. Nothing read is held beyond it,
// whatever the input claims.
const MaxRecordBytes = 256 << 20

// MaxReadBytes bounds what one command reads of results in total (the
// files it is given, the records it takes from the history), so that
// many records each within MaxRecordBytes cannot add up to more memory
// than a small machine has.
const MaxReadBytes = 512 << 20

// TooMuchError is input past MaxReadBytes.
type TooMuchError struct{ Max int64 }

func (e *TooMuchError) Error() string {
	return fmt.Sprintf("more than %d MiB of results in one go", e.Max>>20)
}

// Hint says what to do.
func (e *TooMuchError) Hint() string {
	return "give fewer files or runs at once (a label selector or --last narrows a history query)"
}

// MaxResults bounds how many results one command reads in total (every
// file it is given, every record it takes from the history, every job of
// a fio output), so that memory, about 10 KiB a result once analysed,
// stays within what a small machine has: 100,000 results take about
// 1 GiB. A run of the biggest suite is a few hundred.
const MaxResults = 100_000

// TooManyError is input of more than Max results (or fio jobs, What says
// which).
type TooManyError struct {
	Max  int
	What string
}

func (e *TooManyError) Error() string {
	what := e.What
	if what == "" {
		what = "results"
	}
	return fmt.Sprintf("more than %s %s in one go", units.Commas(int64(e.Max)), what)
}

// Hint says what to do.
func (e *TooManyError) Hint() string {
	return fmt.Sprintf("iolens reads at most %s results at once: give fewer files or runs (a label selector or --last narrows a history query), or split a large NDJSON file (split -l %d) and read each part", units.Commas(int64(e.Max)), e.Max)
}

// errUnknownSchema is a record written by a newer iolens.
var errUnknownSchema = errors.New("unknown result schema")

// DecodeError locates a record that could not be read.
type DecodeError struct {
	Name string // the file, or "stdin"
	Line int    // 1-based line, 0 when not line oriented
	Err  error
}

func (e *DecodeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *DecodeError) Hint() string {
	// The reader of the format knows best (fio's reader names what it
	// could not read, and what to do).
	if h := hint.Of(e.Err); h != "" {
		return h
	}
	if errors.Is(e.Err, errUnknownSchema) {
		return "this file was written by a newer iolens: upgrade iolens to read it"
	}
	var fe *units.FigureError
	if errors.As(e.Err, &fe) {
		return fe.Hint()
	}
	return "iolens reads its own NDJSON or JSON results, iolens watch logs and fio's JSON or json+ output"
}

// Encoder writes results as NDJSON, one record per line: the form iolens
// saves, streams and reads back.
type Encoder struct {
	w   io.Writer
	buf bytes.Buffer
}

// NewEncoder writes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes r as one line, stamped with the current schema. A value
// JSON cannot hold (NaN, an infinity) is an error that names its field.
func (e *Encoder) Encode(r *Result) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	e.buf.Reset()
	e.buf.Write(b)
	e.buf.WriteByte('\n')
	_, err = e.w.Write(e.buf.Bytes())
	return err
}

// Marshal encodes one record (without a newline), stamped with the
// current schema.
func Marshal(r *Result) ([]byte, error) {
	c := *r
	c.Schema = Schema
	b, err := json.Marshal(&c)
	if err != nil {
		var uv *json.UnsupportedValueError
		if errors.As(err, &uv) {
			if p := badFloat(reflect.ValueOf(c), ""); p != "" {
				return nil, fmt.Errorf("result %s: field %s is %s, which JSON cannot hold", r.Test.Name, p, uv.Str)
			}
		}
		return nil, fmt.Errorf("result %s: %w", r.Test.Name, err)
	}
	return b, nil
}

// badFloat finds the path of the first NaN or infinite float in v.
func badFloat(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return path
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return badFloat(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
			if name == "" {
				name = t.Field(i).Name
			}
			if p := badFloat(v.Field(i), strings.TrimPrefix(path+"."+name, ".")); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if p := badFloat(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if p := badFloat(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key())); p != "" {
				return p
			}
		}
	}
	return ""
}

// Unmarshal decodes one record and applies the schema policy: every
// known version is read and upgraded to the current one; records of
// another kind or a newer version are refused.
func Unmarshal(b []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		if fe := integerRange(err); fe != nil {
			return Result{}, fmt.Errorf("result %s: %w", termtext.Line(r.Test.Name), fe)
		}
		return Result{}, err
	}
	switch r.Schema {
	case schemaV3:
	case schemaV2:
		upgradeV2(&r)
	case SchemaV1:
		upgradeV1(&r)
		upgradeV2(&r)
	default:
		if strings.HasPrefix(r.Schema, "iolens.result/") {
			return Result{}, fmt.Errorf("record has schema %q; this iolens reads %s to %s: %w", r.Schema, SchemaV1, schemaV3, errUnknownSchema)
		}
		return Result{}, fmt.Errorf("not an iolens result (schema %q)", r.Schema)
	}
	// Checked before anything is read from the figures: a percentile of
	// 1e308 is refused, not held at the max.
	if err := checkRecord(&r); err != nil {
		return Result{}, fmt.Errorf("result %s: %w", termtext.Line(r.Test.Name), err)
	}
	// Records written before percentiles were held at the max.
	for _, d := range r.Dirs() {
		d.Lat.ClipToMax()
	}
	return r, nil
}

// Formats converts inputs that are not iolens's own records. The record
// package reads iolens NDJSON, JSON arrays and watch logs itself; fio's
// output is read by the fio package, which the caller wires in.
type Formats struct {
	// Fio reads fio's JSON or json+ output (the rest of the stream) into
	// results. Nil refuses fio output.
	Fio func(r io.Reader, name string) ([]Result, error)
}

// Decoder reads results from a stream of any format iolens reads, which
// it sniffs from the first bytes: iolens NDJSON (results and watch
// records, line by line), a JSON array of results (iolens -o json), or
// fio's JSON output. It streams: memory is bounded by MaxRecordBytes per
// record (plus the watch session being rebuilt), never by the input's
// length or by counts read from it.
//
// In NDJSON, a line that is not a record (a bare NaN, a line cut short at
// the end of the file, two "schema" keys, text) is passed over and the
// good records read: Skipped hears each, with its line. A byte order mark
// is passed over too. A record of a newer schema stops the read: what it
// holds cannot be known.
type Decoder struct {
	// Skipped, if set, hears each line passed over (a *DecodeError).
	Skipped func(*DecodeError)
	// MaxResults bounds the results it returns (a *TooManyError past
	// it); 0 means MaxResults. A caller reading several streams gives
	// each what is left.
	MaxResults int
	read       int

	name    string
	br      *bufio.Reader
	formats Formats
	max     int

	started bool
	line    int
	arr     *json.Decoder
	budget  *budgetReader
	watch   *watchStream
	pending []Result
	done    bool
}

// NewDecoder reads from r; name (a file name, "stdin") labels errors and
// results converted from other formats.
func NewDecoder(r io.Reader, name string, f Formats) *Decoder {
	return &Decoder{name: name, br: bufio.NewReaderSize(r, 64<<10), formats: f, max: MaxRecordBytes}
}

func (d *Decoder) fail(err error) error {
	d.done = true
	var de *DecodeError
	if errors.As(err, &de) {
		return err
	}
	return &DecodeError{Name: d.name, Line: d.line, Err: err}
}

// Decode returns the next result, or io.EOF after the last one.
func (d *Decoder) Decode() (Result, error) {
	for len(d.pending) == 0 {
		if d.done {
			return Result{}, io.EOF
		}
		if err := d.step(); err != nil {
			if err == io.EOF {
				d.done = true
				continue
			}
			return Result{}, err
		}
	}
	limit := d.MaxResults
	if limit <= 0 {
		limit = MaxResults
	}
	if d.read >= limit {
		d.done, d.pending = true, nil
		return Result{}, &TooManyError{Max: MaxResults}
	}
	d.read++
	r := d.pending[0]
	d.pending[0] = Result{} // not held twice
	d.pending = d.pending[1:]
	return r, nil
}

// ReadAll decodes every result of the stream.
func (d *Decoder) ReadAll() ([]Result, error) {
	var out []Result
	for {
		r, err := d.Decode()
		if err == io.EOF {
			if len(out) == 0 {
				return nil, &DecodeError{Name: d.name, Err: errors.New("no results in it")}
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
}

// step reads some input and queues the results it completes; io.EOF at
// the end of the stream.
func (d *Decoder) step() error {
	if !d.started {
		d.started = true
		return d.sniff()
	}
	if d.arr != nil {
		return d.arrayElement()
	}
	return d.ndjsonLine()
}

func (d *Decoder) sniff() error {
	if bom, _ := d.br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		d.br.Discard(3)
		d.skip(1, errors.New("a byte order mark, passed over"))
	}
	// Skip leading white space without holding it.
	for {
		c, err := d.br.ReadByte()
		if err == io.EOF {
			return d.fail(errors.New("empty input"))
		}
		if err != nil {
			return d.fail(err)
		}
		if c == '\n' {
			d.line++
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			d.br.UnreadByte()
			break
		}
	}
	d.line++ // the line being read is the next one
	first, _ := d.br.Peek(1)
	switch first[0] {
	case '[':
		d.budget = &budgetReader{r: d.br, left: int64(d.max)}
		d.arr = json.NewDecoder(d.budget)
		if _, err := d.arr.Token(); err != nil {
			return d.fail(err)
		}
		d.line = 0 // arrays are not line oriented
		return nil
	case '{':
		if compactDocument(d.br) {
			// diagnose -o json compacted onto one line (jq -c): read as
			// the indented document is, without holding the line.
			d.br.Discard(1)
			return d.document()
		}
		// One line decides: an iolens record is one line; fio's JSON
		// starts with a line holding only "{".
		line, err := readLine(d.br, d.max)
		if err != nil && err != io.EOF {
			return d.fail(err)
		}
		if probeSchema(line) != "" {
			return d.record(line, err == io.EOF)
		}
		if string(bytes.TrimSpace(line)) == "{" {
			// An indented object: iolens's own documents start with their
			// schema (diagnose -o json), compare -o json with its operands.
			switch firstKey(d.br) {
			case "schema":
				return d.document()
			case "operands":
				return d.fail(&NotResultsError{What: "a comparison written by 'iolens compare -o json'",
					Advice: "'iolens compare' makes it again from the result files or saved runs it compared; 'iolens report' and 'iolens analyze' read those"})
			}
		}
		return d.foreign(io.MultiReader(bytes.NewReader(append(line, '\n')), d.br))
	}
	return d.foreign(d.br)
}

// NotResultsError is a file iolens wrote that holds no results.
type NotResultsError struct {
	What   string // what the file is
	Advice string // which command reads it, or what to read instead
}

func (e *NotResultsError) Error() string { return e.What + ", not results" }

// Hint says which command reads the file.
func (e *NotResultsError) Hint() string { return e.Advice }

// compactDocument says the stream, at its opening "{", holds an iolens
// document (a diagnosis, a comparison) on one line: its first key is the
// schema, and the schema is not that of a record (results and watch
// records are read line by line).
func compactDocument(br *bufio.Reader) bool {
	b, _ := br.Peek(256)
	m := compactSchema.FindSubmatch(b)
	if m == nil {
		return false
	}
	s := string(m[1])
	return strings.HasPrefix(s, "iolens.diagnosis/") || strings.HasPrefix(s, "iolens.comparison/")
}

var compactSchema = regexp.MustCompile(`^\{\s*"schema"\s*:\s*"([^"\\]*)"`)

// firstKey returns the first key of an indented JSON object whose
// opening line has been read, without consuming it; "" when it cannot
// tell.
func firstKey(br *bufio.Reader) string {
	b, _ := br.Peek(4096)
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return ""
	}
	return string(b[1 : end+1])
}

// document opens an indented iolens document whose first key is its
// schema: a diagnosis (diagnose -o json) holds its results in
// "results", which are then read one by one, as a JSON array's are.
func (d *Decoder) document() error {
	d.budget = &budgetReader{r: io.MultiReader(strings.NewReader("{"), d.br), left: int64(d.max)}
	dec := json.NewDecoder(d.budget)
	d.line = 0 // not line oriented
	if _, err := dec.Token(); err != nil {
		return d.fail(err)
	}
	if _, err := dec.Token(); err != nil { // "schema"
		return d.fail(err)
	}
	tok, err := dec.Token()
	if err != nil {
		return d.fail(err)
	}
	schema, _ := tok.(string)
	switch {
	case strings.HasPrefix(schema, "iolens.diagnosis/"):
	case strings.HasPrefix(schema, "iolens.comparison/"):
		return d.fail(&NotResultsError{What: "a comparison written by 'iolens compare -o json'",
			Advice: "'iolens compare' makes it again from the result files or saved runs it compared; 'iolens report' and 'iolens analyze' read those"})
	case strings.HasPrefix(schema, "iolens."):
		return d.fail(&NotResultsError{What: fmt.Sprintf("an iolens document of schema %q", schema),
			Advice: "iolens report and analyze read results: iolens NDJSON or JSON, diagnose -o json, watch logs and fio output"})
	default:
		return d.fail(fmt.Errorf("a JSON object with schema %q is not an iolens document", schema))
	}
	for {
		d.budget.left = int64(d.max)
		tok, err := dec.Token()
		if err != nil {
			return d.fail(err)
		}
		key, ok := tok.(string)
		if !ok { // the object's end
			return d.fail(&NotResultsError{What: "a diagnosis without its results",
				Advice: "'iolens diagnose -o json' writes them; 'iolens history export' writes a saved run's"})
		}
		if key != "results" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return d.fail(err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return d.fail(fmt.Errorf("the diagnosis's results are not an array"))
		}
		d.arr = dec
		return nil
	}
}

// foreign hands the stream to fio's reader.
func (d *Decoder) foreign(r io.Reader) error {
	d.done = true
	if d.formats.Fio == nil {
		return d.fail(errors.New("neither iolens results nor a watch log"))
	}
	rs, err := d.formats.Fio(r, d.name)
	if err != nil {
		return &DecodeError{Name: d.name, Err: err}
	}
	for i := range rs {
		if err := checkRecord(&rs[i]); err != nil {
			return &DecodeError{Name: d.name, Err: fmt.Errorf("job %s: %w", termtext.Line(rs[i].Test.Name), err)}
		}
	}
	d.pending = append(d.pending, rs...)
	return nil
}

func (d *Decoder) ndjsonLine() error {
	for {
		line, err := readLine(d.br, d.max)
		if err == io.EOF && len(line) == 0 {
			return d.endOfStream()
		}
		d.line++
		if err != nil && err != io.EOF {
			return d.fail(err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return d.record(line, err == io.EOF)
	}
}

// skip passes over line n, telling Skipped why.
func (d *Decoder) skip(n int, err error) {
	if d.Skipped != nil {
		d.Skipped(&DecodeError{Name: d.name, Line: n, Err: err})
	}
}

func (d *Decoder) endOfStream() error {
	if d.watch != nil {
		rs, err := d.watch.end()
		if err != nil {
			return d.fail(err)
		}
		d.pending = append(d.pending, rs...)
		d.watch = nil
	}
	return io.EOF
}

// record handles one NDJSON line; last says the file ended in it, with
// no newline.
func (d *Decoder) record(line []byte, last bool) error {
	bad := func(err error) error {
		if last {
			err = fmt.Errorf("the file ends inside this line (cut short?): %w", err)
		}
		d.skip(d.line, fmt.Errorf("%w: passed over", err))
		return nil
	}
	if twoSchemas(line) {
		return bad(errors.New(`two "schema" keys`))
	}
	schema := probeSchema(line)
	switch {
	case strings.HasPrefix(schema, "iolens.result/"):
		r, err := Unmarshal(line)
		if errors.Is(err, errUnknownSchema) || isFigureError(err) {
			return d.fail(err)
		}
		if err != nil {
			return bad(err)
		}
		d.pending = append(d.pending, r)
	case IsWatch(schema):
		w, err := DecodeWatch(line)
		if isFigureError(err) {
			return d.fail(err)
		}
		if err != nil {
			return bad(err)
		}
		if d.watch == nil {
			d.watch = &watchStream{name: d.name}
		}
		rs, err := d.watch.add(w)
		if err != nil {
			return d.fail(err)
		}
		d.pending = append(d.pending, rs...)
	case strings.HasPrefix(schema, "iolens."):
		// Another iolens record kind: not a result.
	default:
		return bad(errors.New("not an iolens record (a JSON object with an iolens schema on each line)"))
	}
	return nil
}

// twoSchemas reports whether a line's top-level object has the key
// "schema" more than once: the fast probe reads the first, a JSON decoder
// keeps the last, and the record must not be one kind to one and another
// to the other.
func twoSchemas(line []byte) bool {
	if bytes.Count(line, []byte(`"schema"`)) < 2 {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == "schema" {
			if n++; n > 1 {
				return true
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

func (d *Decoder) arrayElement() error {
	if !d.arr.More() {
		if _, err := d.arr.Token(); err != nil { // the closing ]
			return d.fail(err)
		}
		return io.EOF
	}
	d.budget.left = int64(d.max)
	var raw json.RawMessage
	if err := d.arr.Decode(&raw); err != nil {
		if d.budget.left <= 0 {
			err = fmt.Errorf("a record is longer than %d MiB", d.max>>20)
		}
		return d.fail(err)
	}
	r, err := Unmarshal(raw)
	if err != nil {
		return d.fail(err)
	}
	d.pending = append(d.pending, r)
	return nil
}

// probeSchema returns the "schema" of a JSON object line, or "". Records
// written by iolens start with it, which is the fast path.
func probeSchema(line []byte) string {
	t := bytes.TrimSpace(line)
	if rest, ok := bytes.CutPrefix(t, []byte(`{"schema":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i > 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return string(rest[:i])
		}
	}
	var p struct {
		Schema string `json:"schema"`
	}
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &p) != nil {
		return ""
	}
	return p.Schema
}

// LineTooLongError is a line longer than the reader allows.
type LineTooLongError struct{ Max int }

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("a line is longer than %d MiB", e.Max>>20)
}

// readLine reads one line without its newline, holding at most max bytes:
// a longer line is an error, never an allocation of its length.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max+1 {
			return nil, &LineTooLongError{Max: max}
		}
		line = append(line, frag...)
		switch err {
		case nil:
			return bytes.TrimSuffix(line, []byte{'\n'}), nil
		case bufio.ErrBufferFull:
			continue
		default:
			return line, err
		}
	}
}

// LineReader reads lines of at most Max bytes (MaxRecordBytes when 0),
// counting them, for the line-oriented readers of other formats.
type LineReader struct {
	br   *bufio.Reader
	Max  int
	Line int
}

// NewLineReader reads r.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = MaxRecordBytes
	}
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), Max: max}
}

// Next returns the next line without its newline, or io.EOF.
func (l *LineReader) Next() ([]byte, error) {
	line, err := readLine(l.br, l.Max)
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	l.Line++
	if err != nil && err != io.EOF {
		return nil, err
	}
	return line, nil
}

// budgetReader fails once more than left bytes have been read since it
// was last reset, so a JSON array element cannot grow without bound.
type budgetReader struct {
	r    io.Reader
	left int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errors.New("record too long")
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// isFigureError reports whether err is a figure no measurement gives: the
// record cannot be trusted, and the read stops there rather than pass
// over it (which would drop a test from the verdict unseen).
// integerRange is the figure error for a number JSON could not put in an
// integer field because it lies outside what the field holds (1e19 bytes,
// a count of -1): refused naming the field, as a figure out of its range
// is, not passed over as a line that is not a record. nil for any other
// error (a fraction or a string where a whole number goes).
func integerRange(err error) *units.FigureError {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil || te.Field == "" {
		return nil
	}
	num, ok := strings.CutPrefix(te.Value, "number ")
	if !ok {
		return nil
	}
	v, perr := strconv.ParseFloat(num, 64)
	if perr != nil && !errors.Is(perr, strconv.ErrRange) {
		return nil
	}
	var lo, hi float64
	switch k := te.Type.Kind(); k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := float64(te.Type.Bits())
		lo, hi = -math.Exp2(bits-1), math.Exp2(bits-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		lo, hi = 0, math.Exp2(float64(te.Type.Bits()))
	default:
		return nil
	}
	if v >= lo && v < hi {
		return nil // in range: a fraction, not a figure too large
	}
	// JSON names the field by its path of JSON names, with the Go name
	// of an embedded struct among them (devices.DeviceSample.in_flight):
	// those are left out, as the record has no such key.
	var path []string
	for _, p := range strings.Split(te.Field, ".") {
		if p != "" && (p[0] < 'A' || p[0] > 'Z') {
			path = append(path, p)
		}
	}
	if len(path) == 0 {
		return nil
	}
	q := quantityOf(path[len(path)-1], wholeFigure)
	q.Max = math.Min(q.Max, math.Nextafter(hi, 0)) // no more than the field holds
	return &units.FigureError{Field: strings.Join(path, "."), Value: v, Quantity: q}
}

func isFigureError(err error) bool {
	var fe *units.FigureError
	return errors.As(err, &fe)
}
