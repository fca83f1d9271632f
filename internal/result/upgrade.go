package result

import (
	"encoding/json"
)

// upgradeV2 brings a v1 or v2 record to v3: what v3 keeps beside the
// figures (fio's CPU, the total latency of each direction, fio's sync
// count) is taken from the fio document the record carries, once, as
// it is read. Those records were made from fio 3.x output, whose keys
// this reads.
func upgradeV2(r *Result) {
	r.Schema = Schema
	if r.Fio != nil || len(r.FioJSON) == 0 {
		return
	}
	var doc struct {
		Jobs        []v2Job `json:"jobs"`
		ClientStats []v2Job `json:"client_stats"`
	}
	if json.Unmarshal(r.FioJSON, &doc) != nil {
		return
	}
	jobs := doc.Jobs
	if len(jobs) == 0 {
		for _, j := range doc.ClientStats {
			if j.JobName != "All clients" {
				jobs = append(jobs, j)
			}
		}
	}
	// A v2 record converted from a fio file was one job entry of it, at
	// its Index; a run's record holds only its own jobs.
	if r.PlainFio() && r.Index >= 1 && r.Index <= len(jobs) {
		jobs = jobs[r.Index-1 : r.Index]
	}
	if len(jobs) == 0 {
		return
	}
	info := &FioInfo{GroupID: jobs[0].GroupID, Jobs: len(jobs)}
	var rd, wr latSum
	for i, j := range jobs {
		if cpu := j.UsrCPU + j.SysCPU; i == 0 || cpu > info.CPUPct {
			info.CPUPct, info.UsrCPUPct, info.SysCPUPct = cpu, j.UsrCPU, j.SysCPU
		}
		if j.Sync.LatNs.N > 0 && j.Sync.TotalIOs == 0 {
			info.SyncTotalIOsZero = true
		}
		rd.add(j.Read.LatNs.Mean, j.Read.LatNs.N)
		wr.add(j.Write.LatNs.Mean, j.Write.LatNs.N)
	}
	r.Fio = info
	if r.Read != nil && r.Read.TotalLatMeanNs == 0 {
		r.Read.TotalLatMeanNs = rd.mean()
	}
	if r.Write != nil && r.Write.TotalLatMeanNs == 0 {
		r.Write.TotalLatMeanNs = wr.mean()
	}
	if r.Sync != nil && r.Sync.TotalLatMeanNs == 0 {
		r.Sync.TotalLatMeanNs = r.Sync.Lat.MeanNs
	}
}

// v2Job is the part of a fio 3.x job entry upgradeV2 reads.
type v2Job struct {
	JobName string  `json:"jobname"`
	GroupID int     `json:"groupid"`
	UsrCPU  float64 `json:"usr_cpu"`
	SysCPU  float64 `json:"sys_cpu"`
	Read    v2Dir   `json:"read"`
	Write   v2Dir   `json:"write"`
	Sync    struct {
		TotalIOs int64 `json:"total_ios"`
		LatNs    struct {
			N uint64 `json:"N"`
		} `json:"lat_ns"`
	} `json:"sync"`
}

type v2Dir struct {
	LatNs struct {
		Mean float64 `json:"mean"`
		N    uint64  `json:"N"`
	} `json:"lat_ns"`
}

type latSum struct {
	sum float64
	n   uint64
}

func (l *latSum) add(mean float64, n uint64) {
	l.sum += mean * float64(n)
	l.n += n
}

func (l *latSum) mean() float64 {
	if l.n == 0 {
		return 0
	}
	return l.sum / float64(l.n)
}
