package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacktune/stacktune/changeset"
)

// The hostile-input test runs the built stacktune as a child process, one
// per case, through a launcher: the test binary run again, small, which
// starts the child, says its pid, waits for it and reports its exit status
// and peak RSS. Linux gives an exec'd process the peak RSS of the process
// it replaced, and Go starts children with vfork, so a child started by
// this test process would report at least this process's own peak; the
// launcher's is small (see nginxconf/memory_test.go).
const hostileLaunchEnv = "STACKTUNE_HOSTILE_LAUNCH"

// launchSpec is what the launcher runs: Bin with Args in Dir, stdin from
// /dev/null, stdout and stderr into the file Out.
type launchSpec struct {
	Bin  string   `json:"bin"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Out  string   `json:"out"`
}

// hostileLaunch is the launcher (TestMain runs it): it prints "pid N",
// then "exit CODE maxrss KIB" (CODE 128+N for a child killed by signal N).
func hostileLaunch(spec string) int {
	var s launchSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Println("launcher:", err)
		return 2
	}
	out, err := os.Create(s.Out)
	if err != nil {
		fmt.Println("launcher:", err)
		return 2
	}
	defer out.Close()
	cmd := exec.Command(s.Bin, s.Args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.Dir, out, out
	if err := cmd.Start(); err != nil {
		fmt.Println("launcher:", err)
		return 2
	}
	fmt.Printf("pid %d\n", cmd.Process.Pid)
	cmd.Wait()
	st := cmd.ProcessState.Sys().(syscall.WaitStatus)
	code := st.ExitStatus()
	if st.Signaled() {
		code = 128 + int(st.Signal())
	}
	fmt.Printf("exit %d maxrss %d\n", code, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	return 0
}

// child is one stacktune run through the launcher.
type child struct {
	pid     int
	out     string // its output's file
	start   time.Time
	ended   chan childEnd
	process *os.Process // the launcher's
}

type childEnd struct {
	code    int
	maxrss  int64 // KiB
	elapsed time.Duration
	err     error
}

func startChild(t *testing.T, args []string, dir string) *child {
	t.Helper()
	spec, _ := json.Marshal(launchSpec{Bin: stacktuneBinary(t), Args: args, Dir: dir, Out: filepath.Join(t.TempDir(), "out")})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostileLaunchEnv+"="+string(spec))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var s launchSpec
	json.Unmarshal(spec, &s)
	c := &child{out: s.Out, start: time.Now(), ended: make(chan childEnd, 1), process: cmd.Process}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		cmd.Wait()
		t.Fatalf("the launcher said nothing")
	}
	if _, err := fmt.Sscanf(sc.Text(), "pid %d", &c.pid); err != nil {
		cmd.Wait()
		t.Fatalf("launcher: %s", sc.Text())
	}
	go func() {
		var e childEnd
		if !sc.Scan() {
			e.err = fmt.Errorf("the launcher ended without the child's status")
		} else if _, err := fmt.Sscanf(sc.Text(), "exit %d maxrss %d", &e.code, &e.maxrss); err != nil {
			e.err = fmt.Errorf("launcher: %s", sc.Text())
		}
		e.elapsed = time.Since(c.start)
		cmd.Wait()
		c.ended <- e
	}()
	return c
}

// wait waits up to d for the child to end.
func (c *child) wait(d time.Duration) (childEnd, bool) {
	select {
	case e := <-c.ended:
		return e, true
	case <-time.After(d):
		return childEnd{}, false
	}
}

func (c *child) signal(s syscall.Signal) { syscall.Kill(c.pid, s) }

// stop ends a child that should have ended: SIGKILL, then its launcher's
// report.
func (c *child) stop() {
	c.signal(syscall.SIGKILL)
	c.wait(10 * time.Second)
}

func (c *child) output() string {
	b, _ := os.ReadFile(c.out)
	return string(b)
}

// hostileKind is one of the hostile files every file input is given.
type hostileKind int

const (
	devZero   hostileKind = iota // /dev/zero: never ends
	fifo                         // a FIFO nobody writes: its plain open blocks for ever
	directory                    // a directory
	sparse1G                     // a 1 GiB sparse file of zeros (no disk)
	junk                         // 64 KiB of random bytes
)

var hostileKinds = []hostileKind{devZero, fifo, directory, sparse1G, junk}

func (k hostileKind) String() string {
	return [...]string{"dev-zero", "fifo", "directory", "sparse-1GiB", "binary-junk"}[k]
}

// hostileWant is what a run on a hostile file must give: its exit status
// (non-zero when fail) and text its output must hold; "{path}" is the
// hostile file as named on the command line.
type hostileWant struct {
	fail bool
	has  []string
}

// whole is what a file read whole must give: refused as what it is, or
// as past its bound, naming the path; junk refused naming the path.
var whole = map[hostileKind]hostileWant{
	devZero:   {true, []string{"{path}", "a character device, not a regular file"}},
	fifo:      {true, []string{"{path}", "a named pipe (FIFO), not a regular file"}},
	directory: {true, []string{"{path}", "a directory, not a regular file"}},
	sparse1G:  {true, []string{"{path}", "larger than"}},
	junk:      {true, []string{"{path}"}},
}

// streamed is what a log read as a stream must give: a device or a
// directory refused as what it is; a FIFO nobody writes read as empty; the
// sparse file and the junk read to their end, the junk skipped and
// counted (rows say how their command reports it).
var streamed = map[hostileKind]hostileWant{
	devZero:   {true, []string{"{path}", "a character device, not a regular file"}},
	directory: {true, []string{"{path}", "a directory, not a regular file"}},
}

// recorded is what an input of the snapshot must give (collect, audit
// without a snapshot): the collector that reads it fails and the snapshot
// records why, naming the path; the command goes on.
var recorded = map[hostileKind]hostileWant{
	devZero:   {false, []string{"{path} is a character device, not a regular file"}},
	fifo:      {false, []string{"{path} is a named pipe (FIFO), not a regular file"}},
	directory: {false, []string{"{path} is a directory, not a regular file"}},
	sparse1G:  {false, []string{"{path} is larger than"}},
	junk:      {false, []string{"{path}"}},
}

// checkedFirst is what a file diagnose or tune reads once the server
// answers must give: what it is checked before the server is asked
// anything; a regular file passes the check and the run stops at the
// server, which is not there.
var checkedFirst = map[hostileKind]hostileWant{
	devZero:   whole[devZero],
	fifo:      whole[fifo],
	directory: whole[directory],
	sparse1G:  unreachable,
	junk:      unreachable,
}

// fileInput is a file the CLI reads, named by a flag or an argument.
type fileInput struct {
	name string
	// args run stacktune; "{path}" is the hostile file, "{good}" the
	// directory of good inputs, "{case}" a directory of the case's own.
	args []string
	// link, when set, is where the hostile file is put (as a symlink) in
	// {case}, for an input named by a prefix or inside a directory;
	// "{path}" is then that name.
	link string
	// files are written into {case} first, "{path}" replaced.
	files map[string]string
	// base is the expectations of the kinds not in want: whole or
	// streamed.
	base map[hostileKind]hostileWant
	want map[hostileKind]hostileWant
}

// noServer is a DSN no server answers, for the inputs read before a server
// is asked anything.
var noServer = []string{"--dsn", "nobody@unix(/nonexistent/mysqld.sock)/", "--no-defaults"}

// withNoServer is args with noServer after them.
func withNoServer(args ...string) []string {
	return append(args, noServer...)
}

// unreachable is the result of an input read (and bounded) before the
// command asks a server, which is not there.
var unreachable = hostileWant{true, []string{"server unreachable"}}

// fileInputs is every file input of the CLI (stacktune --help and each
// command's help), each with what "bounded" means for it. A flag several
// commands share through the same code (--defaults-file, --scenario, the
// snapshot's flags of collect, audit, diagnose and tune) has a row in
// most of them. Not here: the files stacktune writes (-o, --report,
// --emit, --keep, --chart, --snapshot), directories (--state, --dir,
// --datadir, --proc-root, --proc-sys: their files are stacktune's own or
// the kernel's), the commands it runs (--*-bin, --*-restart), sockets
// (--memcached, --redis), apply's --mysql-conf (read once the server
// answers, through the same apply.MaxFileBytes read as --sysctl-conf) and
// rollback's files (from its journal).
var fileInputs = []fileInput{
	// Slow logs, streamed: the sparse file is read to its end in seconds,
	// its zeros skipped and counted as binary junk.
	{name: "digest SLOWLOG", args: []string{"digest", "{path}"}, base: streamed, want: map[hostileKind]hostileWant{
		fifo:     {false, []string{"source: slowlog: {path} (0 B)", "0 events"}},
		sparse1G: {false, []string{"(1.0 GiB)", "skipped: 1 events (binary junk (NUL bytes): 1)"}},
		junk:     {false, []string{"{path} (64.0 KiB)", "skipped: 1 events"}},
	}},
	{name: "digest --defaults-file", args: []string{"digest", "--defaults-file", "{path}"}},
	{name: "indexes --slowlog", args: withNoServer("indexes", "--slowlog", "{path}"), base: streamed, want: map[hostileKind]hostileWant{
		fifo: unreachable, sparse1G: unreachable, junk: unreachable,
	}},
	{name: "indexes --defaults-file", args: []string{"indexes", "--defaults-file", "{path}"}},
	{name: "endpoints --slow-log", args: []string{"endpoints", "--slow-log", "{path}"}, base: streamed, want: map[hostileKind]hostileWant{
		fifo:     {false, []string{"0 requests, 0 statements"}},
		sparse1G: {false, []string{"0 requests, 0 statements"}},
		junk:     {false, []string{"0 requests, 0 statements"}},
	}},
	// Access logs, streamed: with the format given, the sparse file is
	// read to its end and its line counted as skipped; detection refuses
	// what it cannot read, naming the file.
	{name: "http ACCESSLOG (format detected)", args: []string{"http", "{path}"}, base: streamed, want: map[hostileKind]hostileWant{
		fifo:     {true, []string{"accesslog: {path}: cannot detect the format: no non-empty lines"}},
		sparse1G: {true, []string{"accesslog: {path}: cannot detect the format: no non-empty lines (1 line longer than 1 MiB skipped)"}},
		junk:     {true, []string{"accesslog: {path}: no known format reads these lines"}},
	}},
	{name: "http --log-format combined ACCESSLOG", args: []string{"http", "--log-format", "combined", "{path}"}, base: streamed, want: map[hostileKind]hostileWant{
		fifo:     {false, []string{"0 requests"}},
		sparse1G: {false, []string{"(nginx combined, 1.0 GiB)", "skipped: 1 lines (line longer than 1 MiB: 1)"}},
		junk:     {false, []string{"skipped:"}},
	}},
	{name: "http diff BEFORE AFTER", args: []string{"http", "diff", "--log-format", "combined", "{path}", "{good}/access.log"}, base: streamed, want: map[hostileKind]hostileWant{
		fifo:     {false, []string{"0 requests"}},
		sparse1G: {false, []string{"0 requests"}},
		junk:     {false, []string{"0 requests"}},
	}},
	{name: "http --nginx-conf", args: []string{"http", "--nginx-conf", "{path}", "--log-format", "main", "{good}/access.log"}},
	{name: "endpoints --access-log", args: []string{"endpoints", "--slow-log", "{good}/slow.log", "--access-log", "{path}"}, base: streamed, want: map[hostileKind]hostileWant{
		fifo:     {true, []string{"the access log: accesslog: {path}: cannot detect the format"}},
		sparse1G: {true, []string{"the access log: accesslog: {path}: cannot detect the format: no non-empty lines (1 line longer than 1 MiB skipped)"}},
		junk:     {true, []string{"the access log: accesslog: {path}: no known format"}},
	}},
	// Scenarios, read whole, at most scenario.MaxFileSize.
	{name: "bench --scenario", args: []string{"bench", "--no-history", "-d", "1s", "--scenario", "{path}"}},
	{name: "bench export SCENARIO", args: []string{"bench", "export", "--format", "k6", "{path}"}},
	{name: "bench import --scenario", args: []string{"bench", "import", "--no-history", "--scenario", "{path}", "--k6-summary", "{good}/k6.json"}},
	{name: "endpoints --scenario", args: withNoServer("endpoints", "--pfs-tags", "--scenario", "{path}")},
	{name: "diagnose --scenario", args: withNoServer("diagnose", "--scenario", "{path}")},
	{name: "tune --scenario", args: withNoServer("tune", "--scenario", "{path}")},
	{name: "scenario data file", args: []string{"bench", "export", "--format", "k6", "{case}/s.yaml"},
		files: map[string]string{"s.yaml": "base_url: http://127.0.0.1:1/\ndata: {ids: {file: '{path}'}}\nsteps: [{url: '/{{ids}}'}]\n"},
		want: map[hostileKind]hostileWant{
			sparse1G: {true, []string{"{path}", "larger than 64 MiB (scenario.MaxDataFileSize)"}},
			junk:     {false, []string{"k6 script"}}, // any line is a value
		}},
	// Imported results, read whole, at most engines.MaxResultFile.
	{name: "bench import --locust-csv PREFIX", link: "run_stats.csv", args: []string{"bench", "import", "--no-history", "--scenario", "{good}/scenario.yaml", "--locust-csv", "{case}/run"}},
	{name: "bench import --locust-json", args: []string{"bench", "import", "--no-history", "--scenario", "{good}/scenario.yaml", "--locust-json", "{path}"}},
	{name: "bench import --k6-summary", args: []string{"bench", "import", "--no-history", "--scenario", "{good}/scenario.yaml", "--k6-summary", "{path}"}},
	// The run history: SQLite refuses what is not a database.
	{name: "history --history", args: []string{"history", "--history", "{path}"}, want: map[hostileKind]hostileWant{
		sparse1G: {true, []string{"{path}", "file is not a database"}},
		junk:     {true, []string{"{path}", "file is not a database"}},
	}},
	{name: "bench --history", args: []string{"bench", "-n", "1", "--history", "{path}", "http://127.0.0.1:1/"}, want: map[hostileKind]hostileWant{
		sparse1G: {true, []string{"{path}", "file is not a database"}},
		junk:     {true, []string{"{path}", "file is not a database"}},
	}},
	// MySQL option files, at most dbconn.MaxOptionFileBytes.
	{name: "collect --defaults-file", args: []string{"collect", "--no-linux", "--defaults-file", "{path}"}, base: recorded, want: map[hostileKind]hostileWant{
		sparse1G: {false, []string{"option file {path}: larger than 1 MiB (dbconn.MaxOptionFileBytes)"}},
	}},
	{name: "apply --defaults-file", args: []string{"apply", "--dry-run", "--state", "{case}/state", "--defaults-file", "{path}", "{good}/sysctl-tuned"}},
	{name: "diagnose --defaults-file", args: []string{"diagnose", "--defaults-file", "{path}", "http://127.0.0.1:1/"}},
	{name: "tune --defaults-file", args: []string{"tune", "--defaults-file", "{path}", "--scenario", "{good}/scenario.yaml"}},
	{name: "endpoints --defaults-file", args: []string{"endpoints", "--pfs-tags", "--defaults-file", "{path}", "http://127.0.0.1:1/"}},
	{name: "tpcc prepare --defaults-file", args: []string{"tpcc", "prepare", "-w", "1", "--defaults-file", "{path}"}},
	{name: "tpcc run --defaults-file", args: []string{"tpcc", "run", "--defaults-file", "{path}"}},
	{name: "tpcc check --defaults-file", args: []string{"tpcc", "check", "--defaults-file", "{path}"}},
	// Inventories, at most inventory.MaxBytes; SSH files.
	{name: "collect --hosts INVENTORY", args: []string{"collect", "--hosts", "{path}"}},
	{name: "apply --hosts INVENTORY", args: []string{"apply", "--hosts", "{path}", "{good}/sysctl-tuned"}},
	{name: "collect --hosts --known-hosts", args: []string{"collect", "--hosts", "{good}/hosts.ini", "--connect-timeout", "2s", "--known-hosts", "{path}"}, want: map[hostileKind]hostileWant{
		sparse1G: {true, []string{"{path}", "larger than", "fleet.MaxKnownHostsFile"}},
		junk:     {true, []string{"{path}"}},
	}},
	{name: "collect --hosts --identity", args: []string{"collect", "--hosts", "{good}/hosts.ini", "--known-hosts", "{good}/known_hosts", "--connect-timeout", "2s", "--identity", "{path}"}, want: map[hostileKind]hostileWant{
		sparse1G: {true, []string{"{path} is larger than 1 MiB (fleet.MaxKeyFile)"}},
		junk:     {true, []string{"private key {path}: ssh: no key found"}},
	}},
	{name: "apply --hosts --known-hosts", args: []string{"apply", "--hosts", "{good}/hosts.ini", "--connect-timeout", "2s", "--known-hosts", "{path}", "{good}/sysctl-tuned"}, want: map[hostileKind]hostileWant{
		sparse1G: {true, []string{"{path}", "larger than", "fleet.MaxKnownHostsFile"}},
		junk:     {true, []string{"{path}"}},
	}},
	// The snapshot's inputs (collect, and audit without a snapshot): a
	// failing collector is recorded in the snapshot, not fatal; logs are
	// read over the interval, or their last 16 MiB.
	{name: "collect --nginx-conf", args: []string{"collect", "--no-linux", "--nginx-conf", "{path}"}, base: recorded},
	{name: "collect --php-fpm-conf", args: []string{"collect", "--no-linux", "--php-fpm-conf", "{path}"}, base: recorded},
	{name: "collect --http-log", args: []string{"collect", "--no-linux", "--interval", "100ms", "--http-log", "{path}"}, base: recorded, want: map[hostileKind]hostileWant{
		sparse1G: {false, []string{"the last 16 MiB of each log were read"}},
		junk:     {false, []string{"http log: accesslog: {path}: no known format reads these lines"}},
	}},
	{name: "collect --queries", args: []string{"collect", "--no-linux", "--interval", "100ms", "--queries", "{path}"}, base: recorded, want: map[hostileKind]hostileWant{
		sparse1G: {false, []string{"{path}", `"skipped": 1`}},
		junk:     {false, []string{"{path}", `"skipped": 1`}},
	}},
	{name: "audit --nginx-conf", args: []string{"audit", "--no-linux", "--nginx-conf", "{path}"}, base: recorded},
	{name: "audit --php-fpm-conf", args: []string{"audit", "--no-linux", "--php-fpm-conf", "{path}"}, base: recorded},
	{name: "audit --defaults-file", args: []string{"audit", "--no-linux", "--defaults-file", "{path}"}, base: recorded, want: map[hostileKind]hostileWant{
		sparse1G: {false, []string{"option file {path}: larger than 1 MiB (dbconn.MaxOptionFileBytes)"}},
	}},
	{name: "audit --http-log", args: []string{"audit", "--no-linux", "--interval", "100ms", "--http-log", "{path}"}, base: recorded, want: map[hostileKind]hostileWant{
		sparse1G: {false, []string{"the last 16 MiB of each log were read"}},
		junk:     {false, []string{"http log: accesslog: {path}: no known format reads these lines"}},
	}},
	{name: "audit --queries", args: []string{"audit", "--no-linux", "--interval", "100ms", "--queries", "{path}"}, base: recorded, want: map[hostileKind]hostileWant{
		sparse1G: {false, []string{"queries: the slow log did not grow during the interval (or was rotated): its last 64 MiB were read"}},
		junk:     {false, []string{"queries: the slow log did not grow during the interval (or was rotated): its last 64 MiB were read"}},
	}},
	// The same files named to diagnose and tune: checked before the
	// server is asked anything.
	{name: "diagnose --access-log", args: withNoServer("diagnose", "--access-log", "{path}", "http://127.0.0.1:1/"), base: checkedFirst},
	{name: "diagnose --slow-log", args: withNoServer("diagnose", "--slow-log", "{path}", "http://127.0.0.1:1/"), base: checkedFirst},
	{name: "diagnose --nginx-conf", args: withNoServer("diagnose", "--nginx-conf", "{path}", "http://127.0.0.1:1/"), base: checkedFirst},
	{name: "diagnose --php-fpm-conf", args: withNoServer("diagnose", "--php-fpm-conf", "{path}", "http://127.0.0.1:1/"), base: checkedFirst},
	{name: "diagnose --queries", args: withNoServer("diagnose", "--queries", "{path}", "http://127.0.0.1:1/"), base: checkedFirst},
	{name: "diagnose --http-log", args: withNoServer("diagnose", "--http-log", "{path}", "http://127.0.0.1:1/"), base: checkedFirst},
	{name: "tune --access-log", args: withNoServer("tune", "--access-log", "{path}", "--scenario", "{good}/scenario.yaml"), base: checkedFirst},
	{name: "tune --slow-log", args: withNoServer("tune", "--slow-log", "{path}", "--scenario", "{good}/scenario.yaml"), base: checkedFirst},
	{name: "tune --nginx-conf", args: withNoServer("tune", "--nginx-conf", "{path}", "--scenario", "{good}/scenario.yaml"), base: checkedFirst},
	{name: "tune --php-fpm-conf", args: withNoServer("tune", "--php-fpm-conf", "{path}", "--scenario", "{good}/scenario.yaml"), base: checkedFirst},
	{name: "tune --queries", args: withNoServer("tune", "--queries", "{path}", "--scenario", "{good}/scenario.yaml"), base: checkedFirst},
	{name: "tune --http-log", args: withNoServer("tune", "--http-log", "{path}", "--scenario", "{good}/scenario.yaml"), base: checkedFirst},
	// Snapshots, decoded as they are read: at most collect.MaxSnapshotFile
	// (a host's), fleet.MaxSnapshotFile (a fleet's).
	{name: "audit SNAPSHOT", args: []string{"audit", "{path}"}},
	{name: "plan --fleet", args: []string{"plan", "--rate", "100", "--workers", "10", "--response-time", "10ms", "--fleet", "{path}"}, want: map[hostileKind]hostileWant{
		// 1 GiB is fleet.MaxSnapshotFile: read, and refused at its first byte.
		sparse1G: {true, []string{"{path} is not a fleet snapshot: invalid character"}},
	}},
	// Change sets and the files apply edits.
	{name: "apply CHANGES.JSON", args: []string{"apply", "--dry-run", "--state", "{case}/state", "{path}"}, want: map[hostileKind]hostileWant{
		directory: {true, []string{"{path} holds no changes.json"}},
	}},
	{name: "apply EMIT-DIR/changes.json", link: "tuned/changes.json", args: []string{"apply", "--dry-run", "--state", "{case}/state", "{case}/tuned"}},
	{name: "apply --ddl", args: withNoServer("apply", "--dry-run", "--state", "{case}/state", "--ddl", "{path}"), want: map[hostileKind]hostileWant{
		junk: unreachable, // read before the server, parsed with its schema
	}},
	{name: "apply --nginx-conf", args: []string{"apply", "--dry-run", "--state", "{case}/state", "--nginx-conf", "{path}", "{good}/nginx-tuned"}},
	{name: "apply --php-fpm-conf", args: []string{"apply", "--dry-run", "--state", "{case}/state", "--php-fpm-conf", "{path}", "{good}/phpfpm-tuned"}},
	{name: "apply --sysctl-conf", args: []string{"apply", "--dry-run", "--host-wide", "--state", "{case}/state", "--sysctl-conf", "{path}", "{good}/sysctl-tuned"}},
}

// TestFileInputsHostile gives every file input of the CLI (fileInputs)
// each hostile file: /dev/zero, a FIFO nobody writes, a directory, a 1 GiB
// sparse file and binary junk. Each run must end on its own with a clear
// error (naming the path and what it is) or a bounded result, its peak
// RSS under 200 MB; a run still going after a moment is sent SIGTERM
// again, and must end within a few seconds.
func TestFileInputsHostile(t *testing.T) {
	stacktuneBinary(t)
	good := goodInputs(t)
	files := t.TempDir()
	paths := map[hostileKind]string{
		devZero:   "/dev/zero",
		fifo:      filepath.Join(files, "fifo"),
		directory: filepath.Join(files, "dir"),
		sparse1G:  filepath.Join(files, "sparse"),
		junk:      filepath.Join(files, "junk"),
	}
	if err := syscall.Mkfifo(paths[fifo], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(paths[directory], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths[sparse1G], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(paths[sparse1G], 1<<30); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(paths[junk], b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO some run opened in blocking mode is freed at the end.
	t.Cleanup(func() {
		if f, err := os.OpenFile(paths[fifo], os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	const (
		bound      = 30 * time.Second // a run ends on its own within this
		moment     = time.Second      // a run still going then is sent SIGTERM in its second run
		afterTERM  = 15 * time.Second // and must end within this
		memBoundKB = 200_000 * 1000 / 1024
	)
	for _, in := range fileInputs {
		for _, kind := range hostileKinds {
			t.Run(in.name+"/"+kind.String(), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				path := paths[kind]
				if in.link != "" {
					link := filepath.Join(dir, in.link)
					if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(path, link); err != nil {
						t.Fatal(err)
					}
					path = link
				}
				repl := strings.NewReplacer("{path}", path, "{good}", good, "{case}", dir)
				for name, data := range in.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(repl.Replace(data)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				args := make([]string, len(in.args))
				for i, a := range in.args {
					args[i] = repl.Replace(a)
				}
				w, ok := in.want[kind]
				if !ok {
					base := in.base
					if base == nil {
						base = whole
					}
					if w, ok = base[kind]; !ok {
						t.Fatalf("no expectation for %s", kind)
					}
				}
				c := startChild(t, args, dir)
				end, ok := c.wait(bound)
				if !ok {
					c.signal(syscall.SIGTERM)
					_, ended := c.wait(afterTERM)
					c.stop()
					t.Fatalf("stacktune %s: still running after %v (and %s SIGTERM)\n%s", strings.Join(args, " "), bound,
						map[bool]string{true: "ended on", false: "ignored"}[ended], c.output())
				}
				out := c.output()
				if end.err != nil {
					t.Fatal(end.err)
				}
				t.Logf("exit %d in %v, peak RSS %d KiB: %s", end.code, end.elapsed.Round(time.Millisecond), end.maxrss, firstLines(out, 3))
				if (end.code != 0) != w.fail {
					t.Errorf("exit status %d, want failure %v\n%s", end.code, w.fail, out)
				}
				for _, h := range w.has {
					if h = repl.Replace(h); !strings.Contains(out, h) {
						t.Errorf("the output lacks %q:\n%s", h, out)
					}
				}
				if end.maxrss > memBoundKB {
					t.Errorf("peak RSS %d KiB, want under 200 MB", end.maxrss)
				}
				if end.elapsed <= moment {
					return
				}
				// It took a while: again, with SIGTERM after a moment.
				c = startChild(t, args, dir)
				if _, ended := c.wait(moment); ended {
					return
				}
				c.signal(syscall.SIGTERM)
				if end, ended := c.wait(afterTERM); !ended {
					c.stop()
					t.Errorf("still running %v after SIGTERM", afterTERM)
				} else {
					t.Logf("after SIGTERM: exit %d", end.code)
				}
			})
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// goodInputs writes the good files the rows name beside their hostile
// one.
func goodInputs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(name, from string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		write(name, string(b))
	}
	write("scenario.yaml", "base_url: http://127.0.0.1:1/\nsteps: [{url: /}]\n")
	write("k6.json", "{}")
	write("hosts.ini", "[web]\nweb1 ansible_host=127.0.0.1 ansible_port=1\n")
	write("known_hosts", "")
	copyFile("slow.log", fixture)
	copyFile("access.log", "../../accesslog/testdata/logs/nginx-timed.log")
	sets := map[string]changeset.Change{
		"sysctl-tuned": change(changeset.Sysctl, "/etc/sysctl.d", "net.core.somaxconn", "4096", "8192"),
		"nginx-tuned":  change(changeset.Nginx, "nginx http {}", "server_tokens", "", "off"),
		"phpfpm-tuned": change(changeset.PHPFPM, "php-fpm pool www", "pm.max_children", "5", "10"),
	}
	for name, c := range sets {
		if _, err := changeset.Write(filepath.Join(dir, name), &changeset.Set{Source: "test", Host: "test", Changes: []changeset.Change{c}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
