package runner

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// The fio options iolens passes on are an allowlist: the options below,
// each with the values iolens has checked, rendered in a canonical form
// (sizes in bytes, times in the option's own unit) so that fio reads
// exactly what iolens checked. Everything else is refused with the reason.

// engines iolens runs: the ones that do ordinary IO on the test file.
var engines = []string{"libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "posixaio", "mmap", "null"}

type optKind int

const (
	kSize         optKind = iota // bytes, [min, max]
	kCount                       // whole number, [min, max]
	kBool                        // fio BOOL: 0 or 1 (fio reads any number; iolens asks for 0 or 1)
	kFlag                        // fio STR_SET: bare, 0 or 1
	kEnum                        // one of words
	kSeconds                     // time; a bare number is seconds
	kMicros                      // time; a bare number is microseconds
	kCPUs                        // CPU list: 0-3,6
	kBSSplit                     // size/percent:size/percent
	kRange                       // size-size
	kSizePair                    // size or size,size (read,write)
	kCountPair                   // count or count,count (read,write)
	kDistribution                // random | zipf:F | pareto:F | normal:F
	kPattern                     // 0x hex digits or a decimal number
)

type optSpec struct {
	kind     optKind
	min, max int64
	// maxTime bounds a time option below maxTestTime.
	maxTime time.Duration
	words   []string
	// alias is the canonical name when this entry is an alias.
	alias string
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	// maxSizeOpt bounds sizes: far beyond any disk, far below overflow.
	maxSizeOpt = 1 << 60
	// maxBS bounds a block size; fio allocates iodepth blocks per job.
	maxBS = 64 * mib
	// maxBuffersPerJob and maxBuffers bound the IO buffers fio allocates
	// (block size x iodepth, per job and in total), so that a job file can
	// never make fio size memory beyond what a small pod has.
	maxBuffersPerJob = 1 * gib
	maxBuffers       = 4 * gib
	maxIODepth       = 4096
	maxNumJobs       = 64
	// maxTestTime bounds runtime, ramp and the like: a week.
	maxTestTime = 7 * 24 * time.Hour
	// maxWait bounds the waits fio adds outside the IO (thinktime per
	// IO or batch, startdelay before the job); CheckSpec also keeps them
	// within the test's runtime.
	maxWait = time.Hour
)

var allowed = map[string]optSpec{
	// Workload shape.
	"rw":                         {kind: kEnum, words: []string{"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"}},
	"readwrite":                  {alias: "rw"},
	"rw_sequencer":               {kind: kEnum, words: []string{"sequential", "identical"}},
	"bs":                         {kind: kSize, min: 1, max: maxBS},
	"blocksize":                  {alias: "bs"},
	"ba":                         {kind: kSize, min: 1, max: maxBS},
	"blockalign":                 {alias: "ba"},
	"bsrange":                    {kind: kRange, min: 1, max: maxBS},
	"blocksize_range":            {alias: "bsrange"},
	"bssplit":                    {kind: kBSSplit, min: 1, max: maxBS},
	"bs_unaligned":               {kind: kFlag},
	"blocksize_unaligned":        {alias: "bs_unaligned"},
	"bs_is_seq_rand":             {kind: kBool},
	"iodepth":                    {kind: kCount, min: 1, max: maxIODepth},
	"iodepth_batch":              {kind: kCount, min: 0, max: maxIODepth},
	"iodepth_batch_submit":       {alias: "iodepth_batch"},
	"iodepth_batch_complete_min": {kind: kCount, min: 0, max: maxIODepth},
	"iodepth_batch_complete":     {alias: "iodepth_batch_complete_min"},
	"iodepth_batch_complete_max": {kind: kCount, min: 0, max: maxIODepth},
	"iodepth_low":                {kind: kCount, min: 0, max: maxIODepth},
	"io_submit_mode":             {kind: kEnum, words: []string{"inline", "offload"}},
	"numjobs":                    {kind: kCount, min: 1, max: maxNumJobs},
	"rwmixread":                  {kind: kCount, min: 0, max: 100},
	"rwmixwrite":                 {kind: kCount, min: 0, max: 100},
	"ioengine":                   {kind: kEnum, words: engines},
	"direct":                     {kind: kBool},
	"buffered":                   {kind: kBool},
	"sync":                       {kind: kEnum, words: []string{"0", "1", "none", "sync", "dsync"}},
	"fsync":                      {kind: kCount, min: 0, max: 1 << 30},
	"fdatasync":                  {kind: kCount, min: 0, max: 1 << 30},
	"write_barrier":              {kind: kCount, min: 0, max: 1 << 30},
	"end_fsync":                  {kind: kBool},
	"fsync_on_close":             {kind: kBool},
	"overwrite":                  {kind: kBool},
	"invalidate":                 {kind: kBool},
	"pre_read":                   {kind: kBool},
	"fallocate":                  {kind: kEnum, words: []string{"none", "native", "posix", "keep", "truncate", "0", "1"}},
	"fadvise_hint":               {kind: kEnum, words: []string{"0", "1", "sequential", "random"}},
	"thread":                     {kind: kFlag},
	"group_reporting":            {kind: kFlag},
	"stonewall":                  {kind: kFlag},
	"wait_for_previous":          {alias: "stonewall"},
	"new_group":                  {kind: kFlag},
	"cpus_allowed":               {kind: kCPUs},
	"cpus_allowed_policy":        {kind: kEnum, words: []string{"shared", "split"}},
	// Lowering priority only: a job file never makes fio more important
	// than the rest of the machine.
	"nice":      {kind: kCount, min: 0, max: 19},
	"prioclass": {kind: kCount, min: 2, max: 3},
	"prio":      {kind: kCount, min: 0, max: 7},

	// Sizes and offsets.
	"size":             {kind: kSize, min: 1, max: maxSizeOpt},
	"io_size":          {kind: kSize, min: 1, max: maxSizeOpt},
	"io_limit":         {alias: "io_size"},
	"filesize":         {kind: kSize, min: 1, max: maxSizeOpt},
	"offset":           {kind: kSize, min: 0, max: maxSizeOpt},
	"fileoffset":       {alias: "offset"},
	"offset_increment": {kind: kSize, min: 0, max: maxSizeOpt},
	"offset_align":     {kind: kSize, min: 0, max: maxBS},
	"number_ios":       {kind: kCount, min: 1, max: 1 << 50},
	"loops":            {kind: kCount, min: 1, max: 1000},

	// Randomness.
	"norandommap":         {kind: kFlag},
	"softrandommap":       {kind: kBool},
	"randrepeat":          {kind: kBool},
	"allrandrepeat":       {kind: kBool},
	"randseed":            {kind: kCount, min: 0, max: math.MaxInt64},
	"random_generator":    {kind: kEnum, words: []string{"tausworthe", "lfsr", "tausworthe64"}},
	"random_distribution": {kind: kDistribution},
	"percentage_random":   {kind: kCount, min: 0, max: 100},

	// Timing.
	"runtime":               {kind: kSeconds},
	"timeout":               {alias: "runtime"},
	"time_based":            {kind: kFlag},
	"ramp_time":             {kind: kSeconds},
	"startdelay":            {kind: kSeconds, maxTime: maxWait},
	"thinktime":             {kind: kMicros, maxTime: maxWait},
	"thinktime_spin":        {kind: kMicros, maxTime: maxWait},
	"thinktime_blocks":      {kind: kCount, min: 1, max: 1 << 40},
	"thinktime_blocks_type": {kind: kEnum, words: []string{"complete", "issue"}},

	// Rate limits.
	"rate":                  {kind: kSizePair, min: 0, max: maxSizeOpt},
	"rate_min":              {kind: kSizePair, min: 0, max: maxSizeOpt},
	"ratemin":               {alias: "rate_min"},
	"rate_iops":             {kind: kCountPair, min: 0, max: 1 << 40},
	"rate_iops_min":         {kind: kCountPair, min: 0, max: 1 << 40},
	"rate_process":          {kind: kEnum, words: []string{"linear", "poisson"}},
	"rate_cycle":            {kind: kCount, min: 1, max: 3600 * 1000},
	"ratecycle":             {alias: "rate_cycle"},
	"rate_ignore_thinktime": {kind: kBool},

	// Buffers and data.
	"mem":                        {kind: kEnum, words: []string{"malloc", "shm", "shmhuge", "mmap", "mmapshared"}},
	"iomem":                      {alias: "mem"},
	"iomem_align":                {kind: kSize, min: 0, max: mib},
	"mem_align":                  {alias: "iomem_align"},
	"refill_buffers":             {kind: kFlag},
	"zero_buffers":               {kind: kFlag},
	"scramble_buffers":           {kind: kBool},
	"buffer_pattern":             {kind: kPattern},
	"buffer_compress_percentage": {kind: kCount, min: 0, max: 100},
	"buffer_compress_chunk":      {kind: kSize, min: 0, max: maxBS},
	"dedupe_percentage":          {kind: kCount, min: 0, max: 100},

	// Verification.
	"verify": {kind: kEnum, words: []string{"0", "md5", "crc64", "crc32c", "crc32c-intel", "crc32", "crc16", "crc7", "xxhash",
		"sha512", "sha256", "sha1", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "meta", "pattern", "null"}},
	"do_verify":            {kind: kBool},
	"verify_only":          {kind: kFlag},
	"verify_interval":      {kind: kSize, min: 1, max: maxBS},
	"verify_offset":        {kind: kSize, min: 0, max: maxBS},
	"verify_pattern":       {kind: kPattern},
	"verify_fatal":         {kind: kBool},
	"verify_async":         {kind: kCount, min: 0, max: 64},
	"verify_backlog":       {kind: kCount, min: 0, max: 1 << 40},
	"verify_backlog_batch": {kind: kCount, min: 0, max: 1 << 40},
	"experimental_verify":  {kind: kBool},
	// fio saves its verify state in its working directory, which is
	// iolens's scratch directory.
	"verify_state_save": {kind: kBool},

	// Engine options of the engines above.
	"userspace_reap":   {kind: kFlag},
	"hipri":            {kind: kFlag},
	"hipri_percentage": {kind: kCount, min: 0, max: 100},
	"fixedbufs":        {kind: kFlag},
	"registerfiles":    {kind: kFlag},
	"sqthread_poll":    {kind: kFlag},
	"nowait":           {kind: kBool},
}

// refused gives the reason for options people do write, so that the
// error says more than "not supported". Options neither allowed nor
// listed here are refused as unknown to iolens.
var refused = map[string]string{
	"exec_prerun":                   "it runs a command",
	"exec_postrun":                  "it runs a command",
	"trigger":                       "it runs a command",
	"trigger-cmd":                   "it runs a command",
	"trigger-file":                  "it watches a file outside the scratch directory and runs a command",
	"trigger-timeout":               "it is part of fio's remote trigger, which runs a command",
	"write_iolog":                   "it writes a file outside iolens's scratch directory",
	"read_iolog":                    "it replays an IO log, whose IOs (writes included) iolens cannot check",
	"iolog":                         "it replays an IO log, whose IOs (writes included) iolens cannot check",
	"replay_redirect":               "it sends a replayed IO log to another device",
	"replay_no_stall":               "it belongs to IO log replay, which iolens does not run",
	"replay_scale":                  "it belongs to IO log replay, which iolens does not run",
	"replay_align":                  "it belongs to IO log replay, which iolens does not run",
	"replay_time_scale":             "it belongs to IO log replay, which iolens does not run",
	"replay_skip":                   "it belongs to IO log replay, which iolens does not run",
	"read_iolog_chunked":            "it belongs to IO log replay, which iolens does not run",
	"merge_blktrace_file":           "it writes a file outside iolens's scratch directory",
	"merge_blktrace_scalars":        "it belongs to IO log replay, which iolens does not run",
	"merge_blktrace_iters":          "it belongs to IO log replay, which iolens does not run",
	"cgroup":                        "it creates and moves fio into cgroups of its choice (iolens places fio in a cgroup itself with --emulated)",
	"cgroup_weight":                 "it changes cgroup settings",
	"cgroup_nodelete":               "it leaves cgroups behind",
	"uid":                           "it changes the user fio runs as",
	"gid":                           "it changes the group fio runs as",
	"ioscheduler":                   "it changes the device's IO scheduler for every program on the machine",
	"lockfile":                      "it creates lock files",
	"opendir":                       "it adds every file of a directory to the test",
	"filename_format":               "it names the test files, which iolens places itself",
	"unique_filename":               "it names the test files, which iolens places itself",
	"nrfiles":                       "it adds test files, which iolens places itself",
	"nr_files":                      "it adds test files, which iolens places itself",
	"openfiles":                     "it belongs to multi-file tests, which iolens does not run",
	"file_service_type":             "it belongs to multi-file tests, which iolens does not run",
	"create_only":                   "it only lays files out and measures nothing",
	"create_on_open":                "iolens lays out its test file itself",
	"create_serialize":              "iolens lays out its test file itself",
	"create_fsync":                  "iolens lays out its test file itself",
	"allow_file_create":             "iolens lays out its test file itself",
	"file_append":                   "it appends to the test file beyond the size iolens checked",
	"allow_mounted_write":           "it lets fio write to a mounted device",
	"fill_device":                   "it fills the file system until it is full",
	"fill_fs":                       "it fills the file system until it is full",
	"lockmem":                       "it locks memory",
	"hugepage-size":                 "it belongs to huge page memory, which iolens does not use",
	"verify_state_load":             "it loads verify state iolens did not write",
	"verify_dump":                   "it dumps data files on a verify failure",
	"profile":                       "it runs a built-in profile with options iolens cannot check",
	"continue_on_error":             "it hides IO errors, and iolens must see them",
	"ignore_error":                  "it hides IO errors, and iolens must see them",
	"error_dump":                    "it belongs to error handling iolens does itself",
	"exitall":                       "iolens runs one test at a time and needs each to finish",
	"exitall_on_error":              "iolens runs one test at a time and needs each to finish",
	"exit_what":                     "iolens runs one test at a time and needs each to finish",
	"kb_base":                       "it changes what k, M and G mean in the other values; iolens reads them as binary (1024) units",
	"unit_base":                     "it changes the units of the report iolens reads",
	"unified_rw_reporting":          "it changes the report's form; iolens reports reads and writes itself",
	"steadystate":                   "it ends tests on fio's own criteria; use iolens run --until-steady",
	"ss":                            "it ends tests on fio's own criteria; use iolens run --until-steady",
	"ss_dur":                        "it ends tests on fio's own criteria; use iolens run --until-steady",
	"ss_ramp":                       "it ends tests on fio's own criteria; use iolens run --until-steady",
	"steadystate_duration":          "it ends tests on fio's own criteria; use iolens run --until-steady",
	"steadystate_ramp_time":         "it ends tests on fio's own criteria; use iolens run --until-steady",
	"zonemode":                      "zoned devices are not supported",
	"zonesize":                      "zoned devices are not supported",
	"zonerange":                     "zoned devices are not supported",
	"zoneskip":                      "zoned devices are not supported",
	"zonecapacity":                  "zoned devices are not supported",
	"trim_percentage":               "iolens does not measure trims (discards)",
	"trim_verify_zero":              "iolens does not measure trims (discards)",
	"trim_backlog":                  "iolens does not measure trims (discards)",
	"trim_backlog_batch":            "iolens does not measure trims (discards)",
	"numa_cpu_nodes":                "NUMA placement is not supported",
	"numa_mem_policy":               "NUMA placement is not supported",
	"cpumask":                       "use cpus_allowed",
	"gtod_cpu":                      "it dedicates a CPU to the clock",
	"clocksource":                   "iolens relies on fio's default clock",
	"max_latency":                   "it stops the test on a latency threshold",
	"latency_target":                "fio's latency profiling changes the queue depth during the test",
	"latency_window":                "fio's latency profiling changes the queue depth during the test",
	"latency_percentile":            "fio's latency profiling changes the queue depth during the test",
	"latency_run":                   "fio's latency profiling changes the queue depth during the test",
	"flow":                          "flow control between jobs is not supported",
	"flow_id":                       "flow control between jobs is not supported",
	"flow_sleep":                    "flow control between jobs is not supported",
	"stats":                         "iolens needs fio's statistics",
	"serialize_overlap":             "it is not supported",
	"write_hint":                    "it sends lifetime hints to the device",
	"atomic":                        "it is not supported",
	"gpu_dev_id":                    "GPU memory is not supported",
	"wait_for":                      "iolens runs each section as its own test, so sections cannot wait for each other",
	"dedupe_global":                 "it is not supported",
	"dedupe_mode":                   "it is not supported",
	"dedupe_working_set_percentage": "it is not supported",
	"sqthread_poll_cpu":             "it dedicates a CPU to io_uring's submission thread",
	"cmdprio_percentage":            "IO priorities are not supported; use prio and prioclass",
	"cmdprio_class":                 "IO priorities are not supported; use prio and prioclass",
	"cmdprio":                       "IO priorities are not supported; use prio and prioclass",
	"cmdprio_bssplit":               "IO priorities are not supported; use prio and prioclass",
}

// ownedWhy is the reason for options iolens sets for every test.
const ownedWhy = "iolens sets it for every test: it places the test file in its scratch directory and always records 1 s logs and latency histograms"

var owned = map[string]bool{
	"write_bw_log": true, "write_iops_log": true, "write_lat_log": true, "write_hist_log": true,
	"log_avg_msec": true, "log_hist_msec": true, "log_hist_coarseness": true, "log_max_value": true,
	"log_offset": true, "log_prio": true, "log_compression": true, "log_compression_cpus": true,
	"log_store_compressed": true, "log_unix_epoch": true, "log_alternate_epoch": true,
	"log_alternate_epoch_clock_id": true, "log_entries": true, "per_job_logs": true,
	"output": true, "output-format": true, "unlink": true, "unlink_each_loop": true,
	"gtod_reduce": true, "disable_lat": true, "disable_clat": true, "disable_slat": true,
	"disable_bw_measurement": true, "disable_bw": true, "bwavgtime": true, "iopsavgtime": true,
	"lat_percentiles": true, "clat_percentiles": true, "slat_percentiles": true,
	"percentile_list": true, "significant_figures": true, "block_error_percentiles": true,
	"disk_util": true,
}

// canonicalName resolves an alias. The second result is false for names
// that are not allowed.
func canonicalName(key string) (string, optSpec, bool) {
	sp, ok := allowed[key]
	if !ok {
		return "", optSpec{}, false
	}
	if sp.alias != "" {
		return sp.alias, allowed[sp.alias], true
	}
	return key, sp, true
}

// whyRefused says why iolens does not pass an option to fio.
func whyRefused(key string) string {
	if why, ok := refused[key]; ok {
		return why
	}
	if owned[key] {
		return ownedWhy
	}
	return "iolens does not know it, so it cannot check what it does"
}

// refusedHint says what to do about a refused option.
func refusedHint(key string) string {
	switch {
	case owned[key]:
		return "remove it: iolens places test files in its own scratch directory (choose it with the DIR argument or --device) and always records 1 s logs and latency histograms"
	case key == "ioengine":
		return "use one of the engines iolens runs: " + strings.Join(engines, ", ")
	}
	return "remove it; iolens runs these fio options: " + strings.Join(allowedOptions(), ", ")
}

// allowedOptions lists the fio options iolens passes on, sorted.
func allowedOptions() []string {
	out := make([]string, 0, len(allowed))
	for k, sp := range allowed {
		if sp.alias == "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// checkOption validates one option's value and returns the option's
// canonical name and value, the way iolens writes them for fio. why is
// empty for a value that is fine; otherwise err explains what is wrong.
func checkOption(key, value string) (name, canon string, err error) {
	name, sp, ok := canonicalName(key)
	if !ok {
		return "", "", errRefused
	}
	canon, err = sp.check(name, value)
	return name, canon, err
}

// errRefused marks an option iolens does not pass on.
var errRefused = fmt.Errorf("option refused")

func (sp optSpec) check(name, v string) (string, error) {
	bad := func(why, want string) error { return &units.ValueError{Kind: "value", Value: v, Why: why, Want: want} }
	switch sp.kind {
	case kFlag:
		switch v {
		case "", "1":
			return "", nil
		case "0":
			return "0", nil
		}
		return "", bad("not a flag value", "nothing (a bare "+name+"), 1 or 0")
	case kBool:
		switch v {
		case "0", "1":
			return v, nil
		}
		return "", bad("not 0 or 1", "0 or 1")
	case kEnum:
		for _, w := range sp.words {
			if v == w {
				return v, nil
			}
		}
		if name == "ioengine" {
			return "", bad("not an engine iolens runs", "one of "+strings.Join(sp.words, ", ")+
				" (exec, external and file-management engines run programs or delete files)")
		}
		if name == "mem" && strings.Contains(v, ":") {
			return "", bad("maps a file", "one of "+strings.Join(sp.words, ", ")+", without a file")
		}
		return "", bad("not one of the accepted values", "one of "+strings.Join(sp.words, ", "))
	case kSize:
		n, err := checkSize(v, sp.min, sp.max)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(n, 10), nil
	case kCount:
		n, err := units.ParseCount(v, sp.min, sp.max)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(n, 10), nil
	case kSeconds, kMicros:
		unit := time.Second
		if sp.kind == kMicros {
			unit = time.Microsecond
		}
		d, err := parseFioTime(v, unit)
		if err != nil {
			return "", err
		}
		if sp.maxTime > 0 && d > sp.maxTime {
			return "", &units.ValueError{Kind: "duration", Value: v, Why: "too long",
				Want: fmt.Sprintf("at most %s (and within the test's runtime)", sp.maxTime)}
		}
		return formatFioTime(d, unit), nil
	case kCPUs:
		return checkCPUList(v)
	case kRange:
		lo, hi, ok := strings.Cut(v, "-")
		if !ok {
			return "", bad("not a range", "two sizes, low-high, such as 4k-64k")
		}
		a, err := checkSize(lo, sp.min, sp.max)
		if err != nil {
			return "", err
		}
		b, err := checkSize(hi, sp.min, sp.max)
		if err != nil {
			return "", err
		}
		if a > b {
			return "", bad("low end above the high end", "low-high")
		}
		return fmt.Sprintf("%d-%d", a, b), nil
	case kBSSplit:
		return checkBSSplit(v, sp.min, sp.max)
	case kSizePair, kCountPair:
		parts := strings.Split(v, ",")
		if len(parts) > 2 {
			return "", bad("more than two values", "one value, or read,write")
		}
		for i, p := range parts {
			var n int64
			var err error
			if sp.kind == kSizePair {
				n, err = checkSize(p, sp.min, sp.max)
			} else {
				n, err = units.ParseCount(p, sp.min, sp.max)
			}
			if err != nil {
				return "", err
			}
			parts[i] = strconv.FormatInt(n, 10)
		}
		return strings.Join(parts, ","), nil
	case kDistribution:
		if v == "random" {
			return v, nil
		}
		kind, arg, _ := strings.Cut(v, ":")
		switch kind {
		case "zipf", "pareto", "normal":
			x, err := units.ParseNumber(arg, 0, 1e6)
			if err != nil {
				return "", err
			}
			if x == 0 {
				return "", bad("the parameter must be above 0", "random, zipf:THETA, pareto:H or normal:DEV")
			}
			return kind + ":" + strconv.FormatFloat(x, 'f', -1, 64), nil
		}
		return "", bad("not a distribution iolens runs", "random, zipf:THETA, pareto:H or normal:DEV")
	case kPattern:
		if h, ok := strings.CutPrefix(strings.ToLower(v), "0x"); ok {
			if h == "" || len(h) > 512 || strings.Trim(h, "0123456789abcdef") != "" {
				return "", bad("not a hex pattern", "0x and up to 512 hex digits, or a decimal number")
			}
			return "0x" + h, nil
		}
		n, err := units.ParseCount(v, 0, math.MaxInt64)
		if err != nil {
			return "", bad("not a pattern", "0x and up to 512 hex digits, or a decimal number")
		}
		return strconv.FormatInt(n, 10), nil
	}
	return "", fmt.Errorf("option kind %d has no check", sp.kind)
}

// checkSize reads a size with units.ParseSize, and refuses fio's
// percentage sizes, which depend on a file iolens has not sized yet.
func checkSize(v string, lo, hi int64) (int64, error) {
	want := fmt.Sprintf("a size from %s to %s, such as 4k, 1M or 10g", units.FormatSize(lo), units.FormatSize(hi))
	if strings.HasSuffix(strings.TrimSpace(v), "%") {
		return 0, &units.ValueError{Kind: "size", Value: v, Why: "a percentage of the file", Want: want}
	}
	n, err := units.ParseSize(v)
	if err != nil {
		var ve *units.ValueError
		if asValueError(err, &ve) {
			ve.Want = want
			if strings.HasPrefix(ve.Why, "too large") {
				ve.Why = "out of range" // the range is this option's, in Want
			}
		}
		return 0, err
	}
	if n < lo || n > hi {
		return 0, &units.ValueError{Kind: "size", Value: v, Why: "out of range", Want: want}
	}
	return n, nil
}

func asValueError(err error, target **units.ValueError) bool {
	ve, ok := err.(*units.ValueError)
	if ok {
		*target = ve
	}
	return ok
}

// checkBSSplit reads "4k/10:64k/50:32k/" (one direction; the percentage
// of the last may be empty, meaning the rest).
func checkBSSplit(v string, lo, hi int64) (string, error) {
	want := "size/percent pairs joined by ':', such as 4k/10:64k/50:32k/40 (one direction)"
	bad := func(why string) error { return &units.ValueError{Kind: "value", Value: v, Why: why, Want: want} }
	if strings.Contains(v, ",") {
		return "", bad("per-direction splits are not supported")
	}
	parts := strings.Split(v, ":")
	if len(parts) > 64 {
		return "", bad("more than 64 block sizes")
	}
	total := int64(0)
	var out []string
	for i, p := range parts {
		sz, pct, ok := strings.Cut(p, "/")
		if !ok {
			return "", bad("a block size without its percentage")
		}
		n, err := checkSize(sz, lo, hi)
		if err != nil {
			return "", err
		}
		if pct == "" && i == len(parts)-1 {
			out = append(out, strconv.FormatInt(n, 10)+"/")
			continue
		}
		q, err := units.ParseCount(pct, 0, 100)
		if err != nil {
			return "", err
		}
		total += q
		out = append(out, fmt.Sprintf("%d/%d", n, q))
	}
	if total > 100 {
		return "", bad("percentages add up to more than 100")
	}
	return strings.Join(out, ":"), nil
}

// checkCPUList reads a CPU list: "1", "0-3", "0,2,4-7".
func checkCPUList(v string) (string, error) {
	want := "CPU numbers and ranges joined by commas, such as 1, 0-3 or 0,2,4-7"
	if v == "" {
		return "", &units.ValueError{Kind: "value", Value: v, Why: "empty", Want: want}
	}
	parts := strings.Split(v, ",")
	if len(parts) > 64 {
		return "", &units.ValueError{Kind: "value", Value: v, Why: "too many entries", Want: want}
	}
	var out []string
	for _, p := range parts {
		lo, hi, isRange := strings.Cut(p, "-")
		a, err := units.ParseCount(lo, 0, 4095)
		if err != nil {
			return "", err
		}
		if !isRange {
			out = append(out, strconv.FormatInt(a, 10))
			continue
		}
		b, err := units.ParseCount(hi, a, 4095)
		if err != nil {
			return "", err
		}
		out = append(out, fmt.Sprintf("%d-%d", a, b))
	}
	return strings.Join(out, ","), nil
}

// cpusOf lists the CPUs of a checked CPU list.
func cpusOf(list string) []int {
	var out []int
	for _, p := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(p, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if isRange {
			b, _ = strconv.Atoi(hi)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

// parseFioTime reads a fio time value, at most maxTestTime
// (units.ParseFioTime).
func parseFioTime(v string, unit time.Duration) (time.Duration, error) {
	return units.ParseFioTime(v, unit, maxTestTime)
}

// formatFioTime writes a time in the option's unit when it is whole, in
// milliseconds or microseconds otherwise.
func formatFioTime(d, unit time.Duration) string {
	switch {
	case d%unit == 0:
		return strconv.FormatInt(int64(d/unit), 10)
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
	return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
}
