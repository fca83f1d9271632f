package report

import (
	"fmt"
	"io"
)

// Listing is what a command shows that is drawn above this package: the
// suites, the version, the runs saved, a disk's limits, the storage
// classes, the emulator's state and events, a live watch. Value is what
// its JSON form encodes; Forms write its other forms, by the name of the
// format. The registry still chooses the format, its names and its
// escaping.
type Listing struct {
	Value any
	Forms map[string]func(io.Writer) error
}

// listed is the format name of a Listing: JSON encodes its Value unless
// it writes JSON itself.
func listed(name string) func(io.Writer, Input) error {
	return func(w io.Writer, in Input) error {
		if f := in.Listing.Forms[name]; f != nil {
			return f(w)
		}
		if name == "json" {
			return writeJSON(w, in.Listing.Value)
		}
		return fmt.Errorf("no %s form of this listing", name)
	}
}

// The registries of what commands list or show: their -o flags, help
// and completion read them as the reports' do.
var (
	// Listings are the text or JSON of a listing: suites, version,
	// history, the emulator's disks, etcd's verdict, the catalog.
	Listings = Registry{Kind: "listing", Formats: []Format{
		{Name: "text", Escape: plainOut, Write: listed("text")},
		{Name: "json", Escape: dataOut, Write: listed("json")},
	}}
	// Tables are a listing drawn as a table, or its JSON: the cluster's
	// storage classes.
	Tables = Registry{Kind: "table", Formats: []Format{
		{Name: "table", Aliases: []string{"text"}, Escape: plainOut, Write: listed("table")},
		{Name: "json", Escape: dataOut, Write: listed("json")},
	}}
	// LimitSheets are a disk's limits, several disks' table, or sizing:
	// text, JSON, one record per disk (wide) or CSV.
	LimitSheets = Registry{Kind: "limits", Formats: []Format{
		{Name: "text", Escape: plainOut, Write: listed("text")},
		{Name: "json", Escape: dataOut, Write: listed("json")},
		{Name: "wide", Write: listed("wide")},
		{Name: "csv", Write: listed("csv")},
	}}
	// Watches are watch's outputs: a live view on a terminal (tty),
	// NDJSON records otherwise (auto chooses), or a line per finding.
	Watches = Registry{Kind: "watch", Formats: []Format{
		{Name: "auto", Escape: rawOut, Write: listed("auto")},
		{Name: "tty", Escape: rawOut, Write: listed("tty")},
		{Name: "ndjson", Escape: dataOut, Aliases: []string{"json"}, Write: listed("ndjson")},
		{Name: "text", Escape: plainOut, Write: listed("text")},
	}}
	// EventLogs are an emulated disk's controller events: a table, or
	// the log's own NDJSON.
	EventLogs = Registry{Kind: "events", Formats: []Format{
		{Name: "text", Escape: plainOut, Write: listed("text")},
		{Name: "ndjson", Escape: dataOut, Aliases: []string{"json"}, Write: listed("ndjson")},
	}}
)
