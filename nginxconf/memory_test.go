//go:build linux

package nginxconf

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The memory test's processes: the test runs a launcher, which runs the
// child that loads the configuration and reports the child's peak RSS.
const (
	memLaunchEnv = "STACKTUNE_NGINXCONF_MEM_LAUNCH" // path: be the launcher
	memLoadEnv   = "STACKTUNE_NGINXCONF_MEM_LOAD"   // path: be the child
)

// memBound is the most resident memory a process loading any of the
// hostile configurations may reach, the test binary's own included.
const memBound = 100_000_000 // bytes

// atCapsBound is the most for the largest configuration the bounds let
// through (atCaps): the memory Load and Directives may take at all.
const atCapsBound = 450_000_000 // bytes

// atCaps writes the most expensive configuration that loads: 64 MiB in
// all, most of it in words of 1 MiB that are also the labels of blocks
// (the text three times over: as read, as words, as block paths), with
// 500,000 directives of up to 4 words (2,000,000 words) and 2,000,000
// context entries (blocks 100 deep).
func atCaps(t testing.TB, dir string) string {
	main := write(t, dir, "nginx.conf", "events {}\nhttp {\nserver {\ninclude nested.conf;\n}\ninclude many.conf;\n}\ninclude big/*.conf;\n")
	// http, server and 97 locations hold 1 + 2 + (3 + ... + 99) = 4,950
	// entries; 19,900 ifs 100 each; the big blocks 1 each.
	const ifs = 19900
	nested := writeRepeat(t, dir, "nested.conf", strings.Repeat("location / {\n", 97), "if ($a) { return 204; }\n", ifs, strings.Repeat("}\n", 97))
	// Blocks of one 1 MiB word, each holding a directive: 15 in each
	// of three files, then as many as fit.
	big := "b " + strings.Repeat("x", 1<<20-16) + " { a; }\n"
	blocks := 0
	for i := range 3 {
		writeRepeat(t, dir, fmt.Sprintf("big/%d.conf", i), "", big, 15, "")
		blocks += 15
	}
	// events, http, server, 3 includes, 97 locations, the ifs and
	// their returns, the big blocks and their directives.
	rest := MaxDirectives - (6 + 97 + 2*ifs + 2*(blocks+10))
	many := writeRepeat(t, dir, "many.conf", "", "a b c d;\n", rest, "")
	used := int64(3 * 15 * len(big))
	for _, p := range []string{main, nested, many} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		used += fi.Size()
	}
	last := int(MaxTotalBytes - used - 10*int64(len(big)))
	if last < 0 {
		t.Fatalf("the configuration is %d bytes past MaxTotalBytes", -last)
	}
	writeRepeat(t, dir, "big/3.conf", "", big, 10, strings.Repeat("#", last))
	return main
}

// TestLoadMemory: for each hostile configuration, a child process runs
// Load and Directives on it, and its peak resident set stays under
// memBound. It is a bound, not a timing.
//
// The child is the test binary again, run by a launcher that is the test
// binary too: Linux gives an exec'd process the peak RSS of the process
// it replaced, and Go starts children with vfork, so a child run from
// this test would report at least the peak of this whole test process
// (TestLoadHostile reads 60 MiB). The launcher is small, so its child's
// ru_maxrss, read from cmd.ProcessState.SysUsage() in the launcher, is
// the child's own.
func TestLoadMemory(t *testing.T) {
	if p := os.Getenv(memLoadEnv); p != "" {
		memChild(p)
		return
	}
	if p := os.Getenv(memLaunchEnv); p != "" {
		memLaunch(t, p)
		return
	}
	if testing.Short() {
		t.Skip("writes about 100 MB of files")
	}
	cases := append([]hostile{{
		name:       "baseline-minimal",
		build:      func(t testing.TB, dir string) string { return write(t, dir, "nginx.conf", httpConf("gzip on;\n")) },
		directives: 3,
	}}, hostiles...)
	cases = append(cases, hostile{name: "at-all-caps", build: atCaps, directives: MaxDirectives, atCap: true})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bound := int64(memBound)
			if tc.atCap {
				bound = atCapsBound
			}
			dir := t.TempDir()
			main := tc.build(t, dir)
			cmd := exec.Command(os.Args[0], "-test.run=^TestLoadMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), memLaunchEnv+"="+main)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("launcher: %v\n%s%s", err, out, stderr.String())
			}
			rss, result := int64(-1), ""
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				l := sc.Text()
				if v, ok := strings.CutPrefix(l, "maxrss_kib: "); ok {
					rss, _ = strconv.ParseInt(v, 10, 64)
				}
				if v, ok := strings.CutPrefix(l, "result: "); ok {
					result = v
				}
			}
			if rss < 0 || result == "" {
				t.Fatalf("no peak RSS or result from the launcher:\n%s%s", out, stderr.String())
			}
			launcher := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
			t.Logf("child peak RSS %.1f MB (the launcher as wait4 gives it, with this process's peak when larger: %.1f MB); %s",
				float64(rss)*1024/1e6, float64(launcher)*1024/1e6, strings.ReplaceAll(result, dir, "DIR"))
			if rss*1024 >= bound {
				t.Errorf("peak RSS %d KiB, want under %d MB", rss, bound/1_000_000)
			}
			want := "error: " + strings.ReplaceAll(tc.err, "DIR", dir)
			if tc.err == "" {
				want = fmt.Sprintf("%d directives", tc.directives)
			}
			if !strings.HasPrefix(result, want) {
				t.Errorf("child: %s, want %s", result, want)
			}
		})
	}
}

// memLaunch runs the child on path and prints its peak RSS and result.
func memLaunch(t *testing.T, path string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadMemory$", "-test.count=1")
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, memLaunchEnv+"=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, memLoadEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	fmt.Printf("maxrss_kib: %d\n%s", cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, out)
}

// memChild loads path with its directives and prints what it got.
func memChild(path string) {
	c, err := Load(path)
	if err != nil {
		fmt.Printf("result: error: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	d := c.Directives()
	fmt.Printf("result: %d directives\n", len(d))
	runtime.KeepAlive(c)
	runtime.KeepAlive(d)
}
