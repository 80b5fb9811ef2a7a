package accesslog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sampleFile is the sample log of a registered format:
// testdata/formats/LABEL.log, spaces as underscores.
func sampleFile(f Format) string {
	return filepath.Join("testdata", "formats", strings.ReplaceAll(f.Label, " ", "_")+".log")
}

// TestRegistry lists every registered format: its parser reports its
// label and reads every line of its sample in testdata/formats, detection
// names it from that sample when it tries it, and its request-time hint
// is NoRequestTimeHint's.
func TestRegistry(t *testing.T) {
	names, labels := map[string]bool{}, map[string]bool{}
	for _, f := range Formats() {
		t.Run(f.Label, func(t *testing.T) {
			if f.Name == "" && !f.Detect {
				t.Fatal("neither named nor detected: nothing reaches it")
			}
			if f.Name != "" {
				if names[f.Name] {
					t.Errorf("name %q registered twice", f.Name)
				}
				names[f.Name] = true
			}
			if f.Detect {
				if labels[f.Label] {
					t.Errorf("detected label %q registered twice", f.Label)
				}
				labels[f.Label] = true
			}
			p, err := f.New()
			if err != nil {
				t.Fatal(err)
			}
			if p.Format() != f.Label {
				t.Errorf("its parser reports %q", p.Format())
			}
			data, err := os.ReadFile(sampleFile(f))
			if err != nil {
				t.Fatalf("no sample: %v", err)
			}
			lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
			if len(lines) < 5 {
				t.Errorf("the sample has %d lines, want at least 5", len(lines))
			}
			var r Record
			for i, l := range lines {
				if ok, reason := p.Parse(l, &r); !ok {
					t.Errorf("sample line %d: %s", i+1, reason)
				}
			}
			if f.Detect {
				d, err := Detect(lines)
				if err != nil {
					t.Errorf("not detected from its sample: %v", err)
				} else if d.Format() != f.Label {
					t.Errorf("its sample is detected as %s", d.Format())
				}
			}
			if f.Hint == "" || NoRequestTimeHint(f.Label) != f.Hint {
				t.Errorf("hint %q, NoRequestTimeHint gives %q", f.Hint, NoRequestTimeHint(f.Label))
			}
			if f.Name != "" {
				if _, err := Named(f.Name); err != nil {
					t.Errorf("Named(%q): %v", f.Name, err)
				}
			}
		})
	}
	if got := strings.Join(FormatNames, ", "); got != NameList() || len(FormatNames) != len(names) {
		t.Errorf("FormatNames %v, NameList %q, %d names registered", FormatNames, NameList(), len(names))
	}
	// Every sample is a registered format's.
	files, err := filepath.Glob("testdata/formats/*.log")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, f := range Formats() {
		known[sampleFile(f)] = true
	}
	for _, file := range files {
		if !known[file] {
			t.Errorf("%s is no registered format's sample", file)
		}
	}
}
