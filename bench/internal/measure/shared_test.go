package measure

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestToolTable(t *testing.T) {
	rows := []ToolRow{
		NewToolRow("pt-query-digest", 1, Sample{Wall: 80 * time.Second, CPU: 80 * time.Second, MaxRSSKiB: 40 * 1024, Others: 20 * time.Second, DiskRead: 100 << 20}, 256<<20),
		NewToolRow("stacktune", 3, Sample{Wall: 2 * time.Second, CPU: 4 * time.Second, MaxRSSKiB: 20 * 1024}, 256<<20),
	}
	var b bytes.Buffer
	PrintToolTable(&b, rows)
	want := "tool             runs    wall s     CPU s  CPU/wall  peak RSS MiB     MiB/s  other cores\n" +
		"pt-query-digest     1     80.00     80.00      1.00          40.0       3.2         0.25\n" +
		"stacktune           3      2.00      4.00      2.00          20.0     128.0         0.00\n"
	if b.String() != want {
		t.Errorf("PrintToolTable =\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	PrintToolMarkdown(&b, rows[1:])
	want = "| tool | wall s | CPU s | CPU/wall | peak RSS MiB | MiB/s | other cores |\n|---|---:|---:|---:|---:|---:|---:|\n" +
		"| stacktune | 2.00 | 4.00 | 2.00 | 20.0 | 128.0 | 0.00 |\n"
	if b.String() != want {
		t.Errorf("PrintToolMarkdown =\n%s\nwant\n%s", b.String(), want)
	}
	if n := DiskNotes(rows, 256<<20); len(n) != 1 || n[0][:len("pt-query-digest read 100 MiB")] != "pt-query-digest read 100 MiB" {
		t.Errorf("DiskNotes = %q", n)
	}
	if CacheNote("") != "page cache warmed before each tool" || CacheNote("/dev/shm") != "log copied to tmpfs (/dev/shm)" {
		t.Errorf("CacheNote: %q, %q", CacheNote(""), CacheNote("/dev/shm"))
	}
}

func TestPrintMismatches(t *testing.T) {
	var b bytes.Buffer
	if PrintMismatches(&b, nil) || b.Len() != 0 {
		t.Errorf("no mismatches: printed %q", b.String())
	}
	if !PrintMismatches(&b, []string{"a", "b"}) || b.String() != "\nMISMATCHES (2):\n  a\n  b\n" {
		t.Errorf("mismatches printed %q", b.String())
	}
}

func TestStage(t *testing.T) {
	src := t.TempDir()
	a := filepath.Join(src, "a.log")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	p, empty := a, ""
	cleanup, err := Stage(dst, "t-", &p, &empty)
	if err != nil {
		t.Fatal(err)
	}
	if empty != "" || filepath.Dir(filepath.Dir(p)) != dst || filepath.Base(p) != "a.log" {
		t.Errorf("staged to %q, %q", p, empty)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "x" {
		t.Errorf("staged copy: %q, %v", b, err)
	}
	cleanup()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s: %v", p, err)
	}
	missing := filepath.Join(src, "missing")
	if _, err := Stage(dst, "t-", &missing); err == nil || missing != filepath.Join(src, "missing") {
		t.Errorf("staging a missing file: %v, path %q", err, missing)
	}
}

func TestRepeat(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "in.log")
	if err := os.WriteFile(log, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []int
	runs, _, err := Repeat(context.Background(), "cat", 2, time.Minute, log, filepath.Join(dir, "out"), "cat", []string{log}, func(i int, s Sample) { seen = append(seen, i) })
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || len(seen) != 2 || seen[0] != 1 || seen[1] != 2 {
		t.Errorf("Repeat: %d runs, progress %v", len(runs), seen)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out")); err != nil || string(b) != "x\n" {
		t.Errorf("output %q, %v", b, err)
	}
	if _, _, err := Repeat(context.Background(), "false", 1, time.Minute, log, filepath.Join(dir, "out"), "false", nil, func(int, Sample) {}); err == nil || !strings.HasPrefix(err.Error(), "false: ") {
		t.Errorf("a failing run: %v", err)
	}
}

func TestMeta(t *testing.T) {
	log := filepath.Join(t.TempDir(), "x.log")
	type meta struct{ Seed int }
	var m meta
	if ReadMeta(log, &m) {
		t.Error("ReadMeta found metadata that was never written")
	}
	if err := WriteMeta(log, meta{Seed: 7}); err != nil {
		t.Fatal(err)
	}
	if !ReadMeta(log, &m) || m.Seed != 7 {
		t.Errorf("ReadMeta after WriteMeta: %+v", m)
	}
	if b, _ := os.ReadFile(log + ".meta.json"); string(b) != "{\n  \"Seed\": 7\n}\n" {
		t.Errorf("metadata file %q", b)
	}
}
