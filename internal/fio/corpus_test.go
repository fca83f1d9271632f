package fio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// The corpus is real fio output from public repositories, fio 2.1 to
// 3.40, JSON and normal text. It is not part of this repository:
// docs/fio-compat.md lists each file's repository, path, commit and fio
// version, and how to gather them into a directory with an INDEX.tsv;
// IOLENS_FIO_CORPUS names that directory. Every file must give fio's own
// figures: IOPS, bandwidth and the latency means within 0.5%, and
// percentiles exactly (held at the slowest IO, as every record holds
// them). The expected figures come from the small readers
// below, which share nothing with the decoder: a generic JSON walk and a
// few regular expressions over the text. The same readers check the
// files under testdata that are written in each version's shape.

// want is one direction of one test as fio reported it.
type want struct {
	test, dir string
	iops, bw  float64 // IO/s, bytes/s
	// lat is the mean of the latency the percentiles are of (lat when
	// fio had lat percentiles, else clat); tot is the total latency's
	// mean; both ns, 0 when fio measured none.
	lat, tot float64
	pct      map[float64]float64 // fio's own percentiles, ns (lone entries)
	// failed: a job of the test reported an error (and no direction).
	failed bool
}

// corpusDir is the corpus directory, or a skip that says how to get one.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("IOLENS_FIO_CORPUS")
	if dir == "" {
		t.Skip("IOLENS_FIO_CORPUS is not set: the corpus of real fio outputs is kept outside the repository; docs/fio-compat.md lists its files and how to gather them")
	}
	return dir
}

func TestCorpusGivesFiosFigures(t *testing.T) {
	dir := corpusDir(t)
	index := readIndex(t, filepath.Join(dir, "INDEX.tsv"))
	if len(index) < 40 {
		t.Fatalf("%s lists %d files", filepath.Join(dir, "INDEX.tsv"), len(index))
	}
	type tally struct{ files, right int }
	byVersion := map[string]*tally{}
	for _, e := range index {
		v := byVersion[e.version]
		if v == nil {
			v = &tally{}
			byVersion[e.version] = v
		}
		v.files++
		if checkFile(t, filepath.Join(dir, e.file)) {
			v.right++
		}
	}
	var vs []string
	for v := range byVersion {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	for _, v := range vs {
		t.Logf("%-20s %2d files, %2d right", v, byVersion[v].files, byVersion[v].right)
	}
}

// The files written in each fio version's shape give the same figures
// by the reference readers as by the decoder.
func TestFixturesGiveFiosFigures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fio-*"))
	files = append(files, filepath.Join("testdata", "trim_randtrim_64k.json"), filepath.Join("testdata", "unified_mixed_randrw.json"),
		filepath.Join("testdata", "latency_target_2ms.json"), filepath.Join("testdata", "client_server_2hosts.json"))
	if len(files) < 16 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		checkFile(t, f)
	}
}

// checkFile compares what the decoder reads from one file with what the
// reference readers find in it, in a subtest named after the file.
func checkFile(t *testing.T, path string) bool {
	return t.Run(filepath.Base(path), func(t *testing.T) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var wants []want
		if isJSON(b) {
			wants = expectJSON(t, b)
		} else {
			wants = expectText(t, b)
		}
		if len(wants) == 0 {
			t.Fatal("the reference reader found nothing in the file")
		}
		rs, err := ReadResults(bytes.NewReader(b), filepath.Base(path))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range compare(rs, wants) {
			t.Error(p)
		}
	})
}

// compare checks results against the reference figures, in order.
func compare(rs []result.Result, wants []want) []string {
	type got struct {
		r   *result.Result
		dir string
		d   *result.DirResult
	}
	var gots []got
	for i := range rs {
		n := len(gots)
		for _, name := range []string{"read", "write", "trim", "mixed"} {
			if d := rs[i].Dir(name); d != nil {
				gots = append(gots, got{&rs[i], name, d})
			}
		}
		if len(gots) == n {
			gots = append(gots, got{r: &rs[i]})
		}
	}
	var out []string
	if len(gots) != len(wants) {
		out = append(out, fmt.Sprintf("%d test directions, want %d", len(gots), len(wants)))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 0.005*math.Max(math.Abs(a), math.Abs(b)) }
	for i := 0; i < min(len(gots), len(wants)); i++ {
		g, w := gots[i], wants[i]
		at := fmt.Sprintf("%s %s", w.test, w.dir)
		if g.r.Test.Name != w.test || g.dir != w.dir {
			out = append(out, fmt.Sprintf("result %d is %s %s, want %s", i, g.r.Test.Name, g.dir, at))
			continue
		}
		if w.failed != (g.r.Status == "failed") {
			out = append(out, fmt.Sprintf("%s: status %s, fio's error says failed=%v", at, g.r.Status, w.failed))
		}
		if g.d == nil {
			continue
		}
		if !near(g.d.IOPS, w.iops) {
			out = append(out, fmt.Sprintf("%s: IOPS %.2f, fio says %.2f", at, g.d.IOPS, w.iops))
		}
		if !near(g.d.BWBytes, w.bw) {
			out = append(out, fmt.Sprintf("%s: bandwidth %.0f B/s, fio says %.0f", at, g.d.BWBytes, w.bw))
		}
		if w.lat > 0 && !near(g.d.Lat.MeanNs, w.lat) {
			out = append(out, fmt.Sprintf("%s: mean latency %.0f ns, fio says %.0f", at, g.d.Lat.MeanNs, w.lat))
		}
		if w.tot > 0 && !near(g.d.TotalLatMeanNs, w.tot) {
			out = append(out, fmt.Sprintf("%s: mean total latency %.0f ns, fio says %.0f", at, g.d.TotalLatMeanNs, w.tot))
		}
		l := g.d.Lat
		for p, v := range w.pct {
			var have float64
			switch p {
			case 50:
				have = l.P50Ns
			case 90:
				have = l.P90Ns
			case 99:
				have = l.P99Ns
			case 99.9:
				have = l.P999Ns
			case 99.99:
				have = l.P9999Ns
			default:
				continue
			}
			if have != v {
				out = append(out, fmt.Sprintf("%s: p%g %.0f ns, fio says %.0f", at, p, have, v))
			}
		}
	}
	return out
}

type indexEntry struct{ file, repo, path, commit, version string }

// readIndex reads a corpus index: one file a line, tab-separated, under
// a header line: file, repository, path, commit, fio_version.
func readIndex(t *testing.T, path string) []indexEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []indexEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 5 || c[0] == "file" {
			continue
		}
		out = append(out, indexEntry{c[0], c[1], c[2], c[3], c[4]})
	}
	return out
}

// docIndex reads the corpus listing of docs/fio-compat.md: the rows of
// its table whose header starts "| file | repository |".
func docIndex(t *testing.T) []indexEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "fio-compat.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []indexEntry
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| file | repository |") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(l, "|---") {
			continue
		}
		if !strings.HasPrefix(l, "|") {
			in = false
			continue
		}
		c := strings.Split(strings.Trim(l, "| "), " | ")
		for i := range c {
			c[i] = strings.Trim(strings.TrimSpace(c[i]), "`")
		}
		if len(c) != 5 {
			t.Fatalf("docs/fio-compat.md: a corpus row of %d columns: %s", len(c), l)
		}
		out = append(out, indexEntry{c[0], c[1], c[2], c[3], c[4]})
	}
	return out
}

// The corpus is listed in full in the docs, so that anyone can gather
// it again; with IOLENS_FIO_CORPUS set, the directory holds exactly the
// files listed, from the sources listed.
func TestCorpusIndexIsComplete(t *testing.T) {
	listed := docIndex(t)
	repos := map[string]bool{}
	names := map[string]indexEntry{}
	hex := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, e := range listed {
		repos[e.repo] = true
		if _, dup := names[e.file]; dup {
			t.Errorf("%s is listed twice", e.file)
		}
		names[e.file] = e
		if !hex.MatchString(e.commit) || !strings.HasPrefix(e.version, "fio-") || strings.Count(e.repo, "/") != 1 || e.path == "" {
			t.Errorf("%s: incomplete source %+v", e.file, e)
		}
	}
	if len(listed) < 40 || len(repos) < 10 {
		t.Errorf("the corpus lists %d files from %d repositories, want at least 40 from 10", len(listed), len(repos))
	}
	dir := corpusDir(t)
	index := readIndex(t, filepath.Join(dir, "INDEX.tsv"))
	if len(index) != len(listed) {
		t.Errorf("INDEX.tsv lists %d files, docs/fio-compat.md %d", len(index), len(listed))
	}
	for _, e := range index {
		if d, ok := names[e.file]; !ok || d != e {
			t.Errorf("INDEX.tsv: %+v, docs/fio-compat.md: %+v", e, d)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if b := filepath.Base(f); b != "INDEX.tsv" && names[b].file == "" {
			t.Errorf("%s is not listed in docs/fio-compat.md", b)
		}
	}
	for name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("listed but missing: %v", err)
		}
	}
}

func isJSON(b []byte) bool { return bytes.Contains(b, []byte(`"fio version"`)) }

// expectJSON reads fio's figures from a JSON output with a generic walk.
func expectJSON(t *testing.T, b []byte) []want {
	t.Helper()
	start := bytes.Index(b, []byte("{\n"))
	end := bytes.LastIndexByte(b, '}')
	if start < 0 || end < start {
		t.Fatal("no JSON object")
	}
	doc := regexp.MustCompile(`:\s*-?nan\b`).ReplaceAll(b[start:end+1], []byte(": null"))
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	jobs, _ := d["jobs"].([]any)
	if len(jobs) == 0 {
		for _, j := range d["client_stats"].([]any) {
			if j.(map[string]any)["jobname"] != "All clients" {
				jobs = append(jobs, j)
			}
		}
	}
	// Entries of one group and name ran at once: fio's group arithmetic
	// is the sum of IOs and bytes over the longest runtime.
	type key struct {
		g    float64
		name string
	}
	var order []key
	members := map[key][]map[string]any{}
	groupsOf := map[string]map[float64]bool{}
	for _, x := range jobs {
		j := x.(map[string]any)
		k := key{j["groupid"].(float64), j["jobname"].(string)}
		if _, ok := members[k]; !ok {
			order = append(order, k)
		}
		members[k] = append(members[k], j)
		if groupsOf[k.name] == nil {
			groupsOf[k.name] = map[float64]bool{}
		}
		groupsOf[k.name][k.g] = true
	}
	f := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
	var out []want
	for _, k := range order {
		name := k.name
		if len(groupsOf[name]) > 1 {
			name = fmt.Sprintf("%s (group %d)", name, int(k.g))
		}
		failed := false
		for _, j := range members[k] {
			failed = failed || f(j, "error") != 0
		}
		before := len(out)
		for _, dir := range []string{"read", "write", "trim", "mixed"} {
			var ios, bytesDone, rt, iopsSum, bwSum, latW, latSum, totW, totSum float64
			var pct map[float64]float64
			n := 0
			for _, j := range members[k] {
				dd, ok := j[dir].(map[string]any)
				if !ok {
					continue
				}
				by := f(dd, "io_bytes")
				if _, ok := dd["io_kbytes"]; !ok {
					by *= 1024
				}
				io := f(dd, "total_ios")
				if _, ok := dd["total_ios"]; !ok {
					io = math.Round(f(dd, "iops") * f(dd, "runtime") / 1000)
				}
				if io == 0 && by == 0 {
					continue
				}
				n++
				ios += io
				bytesDone += by
				rt = math.Max(rt, f(dd, "runtime"))
				iopsSum += f(dd, "iops")
				if v, ok := dd["bw_bytes"]; ok {
					bwSum += v.(float64)
				} else {
					bwSum += f(dd, "bw") * 1024
				}
				lat, scale := latObj(dd, "lat")
				clat, cscale := latObj(dd, "clat")
				p, ps := lat, scale
				if len(percentiles(lat, scale)) == 0 && len(percentiles(clat, cscale)) > 0 {
					p, ps = clat, cscale
				}
				w := f(p, "N")
				if _, ok := p["N"]; !ok {
					w = io
				}
				latW += w
				latSum += f(p, "mean") * ps * w
				tw := f(lat, "N")
				if _, ok := lat["N"]; !ok {
					tw = io
				}
				totW += tw
				totSum += f(lat, "mean") * scale * tw
				pct = percentiles(p, ps)
			}
			if n == 0 {
				continue
			}
			w := want{test: name, dir: dir, iops: iopsSum, bw: bwSum}
			if n > 1 {
				w.iops, w.bw = ios*1000/rt, bytesDone*1000/rt
			} else {
				w.pct = pct
			}
			if latW > 0 {
				w.lat = latSum / latW
			}
			if totW > 0 {
				w.tot = totSum / totW
			}
			w.failed = failed
			out = append(out, w)
		}
		if len(out) == before && failed {
			out = append(out, want{test: name, failed: true})
		}
	}
	return out
}

// latObj is a direction's latency object of a kind and its scale to ns:
// kind_ns in fio 3.x, kind in µs before.
func latObj(d map[string]any, kind string) (map[string]any, float64) {
	if m, ok := d[kind+"_ns"].(map[string]any); ok {
		return m, 1
	}
	if m, ok := d[kind].(map[string]any); ok {
		return m, 1000
	}
	return nil, 1
}

// percentiles are fio's, in ns, each held at the object's max as every
// record holds them (fio's bucket midpoints can lie above the slowest IO).
func percentiles(m map[string]any, scale float64) map[float64]float64 {
	ps, _ := m["percentile"].(map[string]any)
	mx, _ := m["max"].(float64)
	out := map[float64]float64{}
	for k, v := range ps {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil || p == 0 {
			continue
		}
		out[p] = v.(float64) * scale
		if mx > 0 && out[p] > mx*scale {
			out[p] = mx * scale
		}
	}
	return out
}

var (
	refBlock   = regexp.MustCompile(`(\S[^:]*?): \(groupid=(\d+), jobs=\d+\)`)
	refDir2    = regexp.MustCompile(`^\s*(read|write)\s*: io=.*, bw=(\d+)KB/s, iops=(\d+), runt=\s*(\d+)msec`)
	refDir3    = regexp.MustCompile(`^\s*(read|write): IOPS=.*, BW=([\d.]+)(B|KiB|MiB|GiB)/s .*/(\d+)msec\)`)
	refHeader  = regexp.MustCompile(`^(\S[^:]*): \(g=\d+\): rw=\w+, bs=(?:\(R\) )?(\d+)(B|K|KiB)-`)
	refLatAvg  = regexp.MustCompile(`^\s*(clat|lat) \((nsec|usec|msec)\):.*max=\s*([\d.]+)([kKMG]?),.*avg=\s*([\d.]+)`)
	refPctHead = regexp.MustCompile(`^\s*(clat|lat) percentiles \((nsec|usec|msec)\)`)
	refPct     = regexp.MustCompile(`([\d.]+)th=\[\s*(\d+)\]`)
	refIssued3 = regexp.MustCompile(`issued rwts: total=(\d+),(\d+)`)
)

// expectText reads fio's figures from its normal output with a few
// regular expressions: fio 2.x prints exact IOPS and KiB/s; for 3.x,
// whose headline figures are rounded, the rates are the issued IO
// counts (times the block size of the job's header) over the runtime.
func expectText(t *testing.T, b []byte) []want {
	t.Helper()
	var out []want
	var cur *want
	bs := map[string]float64{}
	var runtime, shownBW float64
	var pctUnit, pctMax float64
	maxOf := map[string]float64{}
	var inPct bool
	scale := map[string]float64{"nsec": 1, "usec": 1e3, "msec": 1e6}
	for _, l := range strings.Split(string(b), "\n") {
		if m := refHeader.FindStringSubmatch(l); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			if m[3] != "B" {
				v *= 1024
			}
			bs[strings.TrimSpace(m[1])] = v
		}
		if m := refBlock.FindStringSubmatch(l); m != nil {
			name := m[1]
			if i := strings.LastIndex(name, "]"); i >= 0 {
				name = name[i+1:]
			}
			out = append(out, want{test: strings.TrimSpace(name)})
			cur, inPct = &out[len(out)-1], false
			continue
		}
		if cur == nil {
			continue
		}
		if m := refDir2.FindStringSubmatch(l); m != nil {
			cur.dir = m[1]
			cur.bw, _ = strconv.ParseFloat(m[2], 64)
			cur.bw *= 1024
			cur.iops, _ = strconv.ParseFloat(m[3], 64)
		}
		if m := refDir3.FindStringSubmatch(l); m != nil {
			cur.dir = m[1]
			shownBW, _ = strconv.ParseFloat(m[2], 64)
			shownBW *= map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[3]]
			runtime, _ = strconv.ParseFloat(m[4], 64)
		}
		if m := refLatAvg.FindStringSubmatch(l); m != nil {
			v, _ := strconv.ParseFloat(m[5], 64)
			mx, _ := strconv.ParseFloat(m[3], 64)
			maxOf[m[1]] = mx * map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}[m[4]] * scale[m[2]]
			if m[1] == "clat" {
				cur.lat = v * scale[m[2]]
			} else {
				cur.tot = v * scale[m[2]]
			}
		}
		if m := refPctHead.FindStringSubmatch(l); m != nil {
			cur.pct, pctUnit, pctMax, inPct = map[float64]float64{}, scale[m[2]], maxOf[m[1]], true
			if m[1] == "lat" {
				cur.lat = cur.tot
			}
			continue
		}
		if inPct && strings.HasPrefix(strings.TrimSpace(l), "|") {
			for _, m := range refPct.FindAllStringSubmatch(l, -1) {
				p, _ := strconv.ParseFloat(m[1], 64)
				v, _ := strconv.ParseFloat(m[2], 64)
				cur.pct[p] = v * pctUnit
				if pctMax > 0 && cur.pct[p] > pctMax {
					cur.pct[p] = pctMax // held at the max, as records hold them
				}
			}
			continue
		}
		inPct = false
		if m := refIssued3.FindStringSubmatch(l); m != nil {
			r, _ := strconv.ParseFloat(m[1], 64)
			w, _ := strconv.ParseFloat(m[2], 64)
			cur.iops = (r + w) * 1000 / runtime
			cur.bw = cur.iops * bs[cur.test]
			if bs[cur.test] == 0 {
				cur.bw = shownBW // no header line: the rate as printed
			}
		}
	}
	return out
}
