package report

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stacktune/stacktune/digest"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/golden"
)

// TestDigestRenderers renders the digest of two real fixtures in every
// format and compares with reviewed golden files.
func TestDigestRenderers(t *testing.T) {
	var inputs []input.Input
	for _, p := range []string{"../testdata/slowlogs/slow014.log", "../testdata/slowlogs/slow023.log"} {
		in, c, err := input.Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		inputs = append(inputs, in)
	}
	agg, stats, err := digest.FromSlowLogs(context.Background(), inputs, digest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := agg.Report(digest.ReportOptions{Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	rep.FillSkipped(stats)
	rep.Overall.Inputs = []string{"slow014.log", "slow023.log"}
	for _, f := range DigestFormats {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Digest(&b, rep, f); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "digest."+f), b.Bytes())
		})
	}
	if err := Digest(&bytes.Buffer{}, rep, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestFormatters(t *testing.T) {
	cases := []struct{ got, want string }{
		{Duration(0), "0"}, {Duration(0.000123), "123µs"}, {Duration(0.0123), "12.3ms"}, {Duration(4.567), "4.57s"},
		{Duration(754), "12m34s"}, {Duration(7500), "2h05m"}, {Duration(3 * 86400), "3.0d"},
		{Count(0), "0"}, {Count(1234567), "1,234,567"}, {Count(-1234), "-1,234"},
		{Bytes(512), "512 B"}, {Bytes(1536), "1.5 KiB"}, {Bytes(268888329), "256.4 MiB"},
		{Percent(0.1234), "12.3%"}, {PerSecond(0.000123), "0.000123"}, {PerSecond(3182.3), "3182"}, {PerSecond(45600), "45.6k"}, {Ratio(0), "-"}, {Ratio(2.5), "2.50"}, {Ratio(502.4), "502"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
