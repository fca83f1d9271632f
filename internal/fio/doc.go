// Package fio drives the fio benchmark and reads what it writes: its
// json/json+ output (which is not always valid JSON), its 1 s logs and its
// latency histograms. Histograms merge exactly because fio's bucket grid is
// fixed, so percentiles are recomputed from merged bins, never averaged.
package fio
