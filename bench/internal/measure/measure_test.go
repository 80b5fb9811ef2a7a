package measure

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRatioAndGrouping(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want string
	}{{85, 1.25, "68.0x"}, {1, 3, "0.3x"}, {1, 0, "n/a"}} {
		if got := Ratio(c.a, c.b); got != c.want {
			t.Errorf("Ratio(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 827123: "827,123", -1234567: "-1,234,567"} {
		if got := GroupInt(n); got != want {
			t.Errorf("GroupInt(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	s := []Sample{
		{Wall: 3 * time.Second, CPU: 5 * time.Second, MaxRSSKiB: 300},
		{Wall: 1 * time.Second, CPU: 9 * time.Second, MaxRSSKiB: 100},
		{Wall: 2 * time.Second, CPU: 7 * time.Second, MaxRSSKiB: 200},
	}
	if got, want := Median(s), (Sample{Wall: 2 * time.Second, CPU: 7 * time.Second, MaxRSSKiB: 200}); got != want {
		t.Errorf("Median = %+v, want %+v", got, want)
	}
	if got := Median(s[:2]); got.Wall != 2*time.Second || got.MaxRSSKiB != 200 {
		t.Errorf("Median of two = %+v, want the means of the middle values", got)
	}
}

func TestParseBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got, err := ParseBusy("cpu  100 5 20 9000 300 1 2 7 0 0")
	if err != nil {
		t.Fatal(err)
	}
	if want := 1350 * time.Millisecond; got != want { // (100+5+20+1+2+7) ticks of 10 ms
		t.Errorf("ParseBusy = %v, want %v", got, want)
	}
	if _, err := ParseBusy("cpu0 1 2 3"); err == nil {
		t.Error("ParseBusy accepted a short per-core line")
	}
}

func TestTailBuffer(t *testing.T) {
	var tb TailBuffer
	tb.Write(bytes.Repeat([]byte("a"), TailMax))
	tb.Write([]byte("end"))
	if s := tb.String(); len(s) != TailMax || !strings.HasSuffix(s, "aend") {
		t.Errorf("TailBuffer kept %d bytes ending %q", len(s), s[len(s)-4:])
	}
}

func TestWriteAtomicAndCopy(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a")
	if err := WriteAtomic(src, func(w io.Writer) error { _, err := io.WriteString(w, "hello\n"); return err }); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "b")
	if err := CopyFile(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dst); err != nil || string(b) != "hello\n" {
		t.Errorf("copy = %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left behind: %d entries", len(entries))
	}
}
