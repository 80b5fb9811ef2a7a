package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/bench/internal/measure"
)

// classCount is one query class as a tool reported it.
type classCount struct {
	id          string
	fingerprint string
	count       int64
}

// digestSummary is what the agreement check needs from a tool's output.
type digestSummary struct {
	tool    string
	events  int64
	skipped int64
	classes map[string]classCount // by upper-case ID / checksum
}

// stacktuneJSON is the part of `stacktune digest --format json` read here.
type stacktuneJSON struct {
	Overall struct {
		Events int64 `json:"events"`
	} `json:"overall"`
	Classes []struct {
		ID          string `json:"id"`
		Fingerprint string `json:"fingerprint"`
		Count       int64  `json:"count"`
	} `json:"classes"`
	Skipped struct {
		Count int64 `json:"count"`
	} `json:"skipped"`
}

// ptJSON is the part of `pt-query-digest --output json` (3.2.1) read here.
// pt prints its counts as JSON numbers; json.Number also takes the quoted
// numbers it uses for metrics, should a version quote them.
type ptJSON struct {
	Global struct {
		QueryCount json.Number `json:"query_count"`
	} `json:"global"`
	Classes []struct {
		Checksum    string      `json:"checksum"`
		Fingerprint string      `json:"fingerprint"`
		QueryCount  json.Number `json:"query_count"`
	} `json:"classes"`
}

func readStacktune(path string) (digestSummary, error) {
	var r stacktuneJSON
	if err := measure.ReadJSON(path, &r); err != nil {
		return digestSummary{}, err
	}
	s := digestSummary{tool: "stacktune", events: r.Overall.Events, skipped: r.Skipped.Count, classes: map[string]classCount{}}
	for _, c := range r.Classes {
		id := strings.ToUpper(c.ID)
		s.classes[id] = classCount{id: id, fingerprint: c.Fingerprint, count: c.Count}
	}
	return s, nil
}

func readPT(path string) (digestSummary, error) {
	var r ptJSON
	if err := measure.ReadJSON(path, &r); err != nil {
		return digestSummary{}, err
	}
	total, err := r.Global.QueryCount.Int64()
	if err != nil {
		return digestSummary{}, fmt.Errorf("pt-query-digest global.query_count %q: %w", r.Global.QueryCount, err)
	}
	s := digestSummary{tool: "pt-query-digest", events: total, classes: map[string]classCount{}}
	for _, c := range r.Classes {
		n, err := c.QueryCount.Int64()
		if err != nil {
			return digestSummary{}, fmt.Errorf("pt-query-digest class %s query_count %q: %w", c.Checksum, c.QueryCount, err)
		}
		id := strings.ToUpper(c.Checksum)
		s.classes[id] = classCount{id: id, fingerprint: c.Fingerprint, count: n}
	}
	return s, nil
}

// compareDigests lists every difference between a and b in class set,
// per-class count and total events, biggest classes first. Each line names
// the fingerprints, so a split or merged class can be recognised.
func compareDigests(a, b digestSummary) []string {
	var out []string
	if a.events != b.events {
		out = append(out, fmt.Sprintf("total events: %s %d, %s %d (diff %+d)", a.tool, a.events, b.tool, b.events, b.events-a.events))
	}
	for _, c := range sortedClasses(a.classes) {
		o, ok := b.classes[c.id]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("class %s only in %s: count %d, fingerprint %q", c.id, a.tool, c.count, c.fingerprint))
		case o.count != c.count:
			out = append(out, fmt.Sprintf("class %s count: %s %d, %s %d (diff %+d); fingerprints %q / %q",
				c.id, a.tool, c.count, b.tool, o.count, o.count-c.count, c.fingerprint, o.fingerprint))
		}
	}
	for _, c := range sortedClasses(b.classes) {
		if _, ok := a.classes[c.id]; !ok {
			out = append(out, fmt.Sprintf("class %s only in %s: count %d, fingerprint %q", c.id, b.tool, c.count, c.fingerprint))
		}
	}
	return out
}

// fingerprintNotes lists classes with the same ID whose fingerprint text
// differs: not a disagreement on the classes, but worth knowing.
func fingerprintNotes(a, b digestSummary) []string {
	var out []string
	for _, c := range sortedClasses(a.classes) {
		if o, ok := b.classes[c.id]; ok && o.fingerprint != c.fingerprint {
			out = append(out, fmt.Sprintf("class %s fingerprint text: %s %q, %s %q", c.id, a.tool, c.fingerprint, b.tool, o.fingerprint))
		}
	}
	return out
}

// sortedClasses orders classes by count, then ID.
func sortedClasses(m map[string]classCount) []classCount {
	cs := make([]classCount, 0, len(m))
	for _, c := range m {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].count != cs[j].count {
			return cs[i].count > cs[j].count
		}
		return cs[i].id < cs[j].id
	})
	return cs
}
