package accesslog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// benchLines returns the lines of a sample log that p reads, repeated to
// about 1 MiB, and their size with line ends.
func benchLines(b *testing.B, p Parser, file string) ([][]byte, int64) {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "logs", file))
	if err != nil {
		b.Fatal(err)
	}
	var good [][]byte
	var r Record
	for _, l := range bytes.Split(data, []byte("\n")) {
		if ok, _ := p.Parse(l, &r); ok {
			good = append(good, l)
		}
	}
	var lines [][]byte
	var size int64
	for size < 1<<20 {
		for _, l := range good {
			lines = append(lines, l)
			size += int64(len(l)) + 1
		}
	}
	return lines, size
}

func benchParse(b *testing.B, p Parser, file string) {
	lines, size := benchLines(b, p, file)
	b.SetBytes(size)
	b.ReportAllocs()
	var r Record
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			if ok, reason := p.Parse(l, &r); !ok {
				b.Fatal(reason)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}

// BenchmarkNginxCombined is the main case: nginx combined with
// $request_time and $upstream_response_time.
func BenchmarkNginxCombined(b *testing.B) {
	benchParse(b, mustNginx(b, CombinedTimed), "nginx-timed.log")
}

func BenchmarkNginxUpstreamTime(b *testing.B) {
	f, err := NginxFormatFromConfig(sampleConf, "upstream_time")
	if err != nil {
		b.Fatal(err)
	}
	benchParse(b, mustNginx(b, f), "nginx-upstream-time.log")
}

func BenchmarkNginxJSONFormat(b *testing.B) {
	f, err := NginxFormatFromConfig(sampleConf, "json_combined")
	if err != nil {
		b.Fatal(err)
	}
	benchParse(b, mustNginx(b, f), "nginx-json.log")
}

func BenchmarkJSON(b *testing.B) { benchParse(b, NewJSON(), "nginx-json.log") }

func BenchmarkLTSV(b *testing.B) { benchParse(b, NewLTSV(), "ltsv.log") }

func BenchmarkApacheCombinedD(b *testing.B) {
	benchParse(b, mustApache(b, ApacheCombinedD), "apache-combined-d.log")
}
