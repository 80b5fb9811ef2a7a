package guildboardtest

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// boardLine is a line the app wrote for a board page (from a real run).
const boardLine = `{"start":1795860194.148934,"end":1795860194.2380922,"pid":13948,"method":"GET","route":"GET /guilds/{id}/board","path":"/guilds/3/board","status":200,"wall_ms":89.158,"cpu_ms":16.34,"db_ms":84.682,"queries":{"board_author":{"sql":"SELECT name, level FROM players WHERE id = ?","calls":1000,"ms":80.864},"board_posts":{"sql":"SELECT id, player_id, body, created_at FROM posts WHERE guild_id = ? ORDER BY id DESC LIMIT 1000","calls":1,"ms":3.204},"guild":{"sql":"SELECT name, tag FROM guilds WHERE id = ?","calls":1,"ms":0.209}}}`

// notFoundLine is a 404 the app logged: no statement.
const notFoundLine = `{"start":1795860190.5,"end":1795860190.5001,"pid":13947,"method":"GET","route":"GET /nope","path":"/nope","status":404,"wall_ms":0.081,"cpu_ms":0.076,"db_ms":0,"queries":{}}`

func TestReadRequests(t *testing.T) {
	cases := []struct {
		name    string
		log     string
		want    int    // requests read
		wantErr string // substring of the error
	}{
		{name: "two requests and a blank line", log: boardLine + "\n\n" + notFoundLine + "\n", want: 2},
		{name: "no final newline", log: boardLine, want: 1},
		{name: "empty", log: "", want: 0},
		{name: "unknown field", log: boardLine + "\n" + strings.Replace(notFoundLine, `"pid"`, `"worker"`, 1) + "\n", want: 1, wantErr: `:2: json: unknown field "worker"`},
		{name: "cut line", log: boardLine[:100] + "\n", wantErr: ":1: unexpected EOF"},
		{name: "two values on a line", log: notFoundLine + " {}\n", wantErr: ":1: more than one JSON value"},
		{name: "no route", log: strings.Replace(notFoundLine, `"route":"GET /nope",`, "", 1), wantErr: ":1: no method or route"},
		{name: "bad status", log: strings.Replace(notFoundLine, `"status":404`, `"status":42`, 1), wantErr: ":1: status 42"},
		{name: "negative cpu", log: strings.Replace(notFoundLine, `"cpu_ms":0.076`, `"cpu_ms":-1`, 1), wantErr: ":1: times"},
		{name: "ends before it starts", log: strings.Replace(notFoundLine, `"end":1795860190.5001`, `"end":1`, 1), wantErr: ":1: times"},
		{name: "statement without calls", log: strings.Replace(boardLine, `"calls":1000`, `"calls":0`, 1), wantErr: `:1: statement "board_author"`},
		{name: "statement without text", log: strings.Replace(boardLine, `"sql":"SELECT name, tag FROM guilds WHERE id = ?",`, "", 1), wantErr: `:1: statement "guild"`},
		{name: "line too long", log: notFoundLine + "\n" + strings.Repeat("x", maxLineBytes+1) + "\n", want: 1, wantErr: ":2: a line over"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "requests.jsonl")
			if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
				t.Fatal(err)
			}
			reqs, err := ReadRequests(path)
			if c.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), path+c.wantErr)) {
				t.Fatalf("error %v, want %q after the path", err, c.wantErr)
			}
			if len(reqs) != c.want {
				t.Errorf("%d requests, want %d", len(reqs), c.want)
			}
		})
	}
	if _, err := ReadRequests(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "request log") {
		t.Errorf("a missing log: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	other := strings.NewReplacer(`"calls":1000`, `"calls":998`, `"cpu_ms":16.34`, `"cpu_ms":20.34`, `"status":200`, `"status":500`).Replace(boardLine)
	if err := os.WriteFile(path, []byte(boardLine+"\n"+notFoundLine+"\n"+other+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reqs, err := ReadRequests(path)
	if err != nil {
		t.Fatal(err)
	}
	eps := Summarize(reqs)
	b := eps[RouteBoard]
	cases := []struct {
		name      string
		got, want float64
	}{
		{"requests", float64(b.Requests), 2},
		{"errors", float64(b.Errors), 1},
		{"author calls per request", b.PerRequest(StmtBoardAuthor), 999},
		{"posts calls per request", b.PerRequest(StmtBoardPosts), 1},
		{"absent statement", b.PerRequest(StmtPlayerName), 0},
		{"mean cpu", b.MeanCPUMs(), 18.34},
		{"mean db", b.MeanDBMs(), 84.682},
		{"routes", float64(len(eps)), 2},
		{"no requests", (&Endpoint{}).PerRequest(StmtBoardAuthor) + (&Endpoint{}).MeanWallMs(), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := c.got - c.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("%v, want %v", c.got, c.want)
			}
		})
	}
	if got := b.Fingerprint(StmtBoardAuthor); got != "select name, level from players where id = ?" {
		t.Errorf("fingerprint %q", got)
	}
	if got := strings.Join(b.Statements(), ","); got != "board_author,board_posts,guild" {
		t.Errorf("statements %s", got)
	}
}

func TestFromHeaders(t *testing.T) {
	h := func(queries, db, cpu, wall string) http.Header {
		hd := http.Header{}
		hd.Set("X-App-Queries", queries)
		hd.Set("X-App-DB-Ms", db)
		hd.Set("X-App-CPU-Ms", cpu)
		hd.Set("X-App-Wall-Ms", wall)
		return hd
	}
	cases := []struct {
		name    string
		h       http.Header
		calls   map[string]int
		cpu     float64
		wantErr string
	}{
		{name: "board", h: h("board_author=1000,board_posts=1,guild=1", "69.688", "18.860", "74.801"), calls: map[string]int{"board_author": 1000, "board_posts": 1, "guild": 1}, cpu: 18.86},
		{name: "no statement", h: h("", "0.000", "0.076", "0.081"), calls: map[string]int{}, cpu: 0.076},
		{name: "no headers", h: http.Header{}, wantErr: "X-App-DB-Ms"},
		{name: "bad count", h: h("guild=one", "1", "1", "1"), wantErr: `"guild=one"`},
		{name: "zero count", h: h("guild=0", "1", "1", "1"), wantErr: `"guild=0"`},
		{name: "no id", h: h("=3", "1", "1", "1"), wantErr: `"=3"`},
		{name: "twice", h: h("guild=1,guild=2", "1", "1", "1"), wantErr: "guild twice"},
		{name: "negative time", h: h("guild=1", "1", "-2", "1"), wantErr: "X-App-CPU-Ms"},
		{name: "not a number", h: h("guild=1", "1", "1", "NaN"), wantErr: "X-App-Wall-Ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := FromHeaders(c.h)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Calls) != len(c.calls) || m.CPUMs != c.cpu {
				t.Errorf("%+v, want calls %v cpu %v", m, c.calls, c.cpu)
			}
			for id, n := range c.calls {
				if m.Calls[id] != n {
					t.Errorf("%s: %d calls, want %d", id, m.Calls[id], n)
				}
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"plain words", commandLine("/tmp/app/fix.sh", "on"), "/tmp/app/fix.sh on"},
		{"a space", commandLine("nginx", "-g", "daemon off;"), "nginx -g 'daemon off;'"},
		{"a quote", commandLine("echo", "it's"), `echo 'it'\''s'`},
		{"empty word", commandLine("x", ""), "x ''"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%s, want %s", c.got, c.want)
			}
		})
	}
}

// FuzzReadRequests: any log is read or refused with its line, never a
// panic, and what is read passes the checks.
func FuzzReadRequests(f *testing.F) {
	f.Add(boardLine + "\n" + notFoundLine + "\n")
	f.Add(notFoundLine)
	f.Add("{}\n")
	f.Add(`{"queries":{"a":{"sql":"x","calls":1e400}}}`)
	f.Fuzz(func(t *testing.T, log string) {
		reqs, err := parseRequests(strings.NewReader(log))
		for _, r := range reqs {
			if cerr := r.check(); cerr != nil {
				t.Fatalf("a request read fails its check: %v", cerr)
			}
		}
		if err != nil && !strings.HasPrefix(err.Error(), ":") {
			t.Fatalf("error %q does not start with its line", err)
		}
		Summarize(reqs)
	})
}

// FuzzFromHeaders: any header values are read or refused, never a panic;
// what is read is a count of at least one per statement.
func FuzzFromHeaders(f *testing.F) {
	f.Add("board_author=1000,board_posts=1,guild=1", "69.688", "18.860", "74.801")
	f.Add("", "0", "0", "0")
	f.Add("a=1,,b=2", "1e308", "-0", "Inf")
	f.Fuzz(func(t *testing.T, queries, db, cpu, wall string) {
		h := http.Header{"X-App-Queries": {queries}, "X-App-Db-Ms": {db}, "X-App-Cpu-Ms": {cpu}, "X-App-Wall-Ms": {wall}}
		m, err := FromHeaders(h)
		if err != nil {
			return
		}
		for id, n := range m.Calls {
			if id == "" || n < 1 {
				t.Fatalf("read %q=%d from %q", id, n, queries)
			}
		}
		if m.CPUMs < 0 || m.DBMs < 0 || m.WallMs < 0 {
			t.Fatalf("negative time %+v", m)
		}
	})
}
