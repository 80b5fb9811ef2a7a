package reqtrace

import (
	"sort"

	"github.com/stacktune/stacktune/fingerprint"
)

// Bounds of the class table.
const (
	// MaxClasses is the most merged classes kept; statements of further
	// classes are counted under OtherClass.
	MaxClasses = 10000
	// maxMembers bounds the pt-query-digest classes listed per merged
	// class.
	maxMembers = 16
	// maxSample bounds a class's sample statement, in bytes.
	maxSample = 2048
)

// OtherClass names the statements of classes past MaxClasses.
const OtherClass = "(other statements)"

// classInfo is one merged class: the statements whose pt-query-digest
// fingerprints merge to one fingerprint.Merged.
type classInfo struct {
	mergedID    string
	fingerprint string // the first member's fingerprint, as pt-query-digest writes it
	sample      string
	members     map[string]int64 // pt-query-digest ID → calls
	memberFP    map[string]string
	calls       int64
	time        float64
	rowsSent    int64
	rowsEx      int64
	exKnown     int64 // calls whose rows examined are known
}

// classTable interns statements into merged classes.
type classTable struct {
	byMerged map[string]int32
	byFP     map[string]int32 // pt fingerprint → class, a cache of the merge
	list     []*classInfo
	other    int32 // -1 until needed
	fp       []byte
}

func newClassTable() *classTable {
	return &classTable{byMerged: map[string]int32{}, byFP: map[string]int32{}, other: -1}
}

// of returns the class of a statement text.
func (t *classTable) of(text []byte) int32 {
	t.fp = fingerprint.Append(t.fp[:0], text)
	if i, ok := t.byFP[string(t.fp)]; ok {
		t.note(i, string(t.fp), text)
		return i
	}
	fp := string(t.fp)
	mid := fingerprint.MergedID(fp)
	i, ok := t.byMerged[mid]
	if !ok {
		if len(t.list) >= MaxClasses {
			i = t.otherClass()
			t.byFP[fp] = i
			return i
		}
		i = int32(len(t.list))
		t.list = append(t.list, &classInfo{mergedID: mid, fingerprint: fp, sample: clip(text), members: map[string]int64{}, memberFP: map[string]string{}})
		t.byMerged[mid] = i
	}
	if len(t.byFP) < 4*MaxClasses {
		t.byFP[fp] = i
	}
	t.note(i, fp, text)
	return i
}

// note counts a member of class i.
func (t *classTable) note(i int32, fp string, text []byte) {
	c := t.list[i]
	if c.mergedID == OtherClass {
		return
	}
	id := fingerprint.ID(fp)
	if _, ok := c.members[id]; ok || len(c.members) < maxMembers {
		c.members[id]++
		if _, ok := c.memberFP[id]; !ok {
			c.memberFP[id] = fp
		}
	}
}

func (t *classTable) otherClass() int32 {
	if t.other < 0 {
		t.other = int32(len(t.list))
		t.list = append(t.list, &classInfo{mergedID: OtherClass, fingerprint: OtherClass, members: map[string]int64{}, memberFP: map[string]string{}})
	}
	return t.other
}

// memberIDs are a class's pt-query-digest IDs, most calls first.
func (c *classInfo) memberIDs() []string {
	ids := make([]string, 0, len(c.members))
	for id := range c.members {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if c.members[ids[i]] != c.members[ids[j]] {
			return c.members[ids[i]] > c.members[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids
}

func clip(b []byte) string {
	if len(b) > maxSample {
		b = b[:maxSample]
	}
	return string(b)
}
