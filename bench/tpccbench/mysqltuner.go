package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/stacktune/stacktune/knobsearch"
	"github.com/stacktune/stacktune/mysqlvar"
)

// tunerAdvice is MySQLTuner's "Variables to adjust", made into a
// configuration: what was taken, with the value used, and what was not,
// with why.
type tunerAdvice struct {
	Version string            `json:"version"`
	Lines   []string          `json:"lines"`
	Config  knobsearch.Config `json:"config"`
	Taken   []tunerLine       `json:"taken"`
	Left    []tunerLine       `json:"left"`
}

type tunerLine struct {
	Line  string `json:"line"`
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
	Why   string `json:"why"`
}

// The shapes of MySQLTuner 1.9's "Variables to adjust" lines.
var (
	tunerAtLeast = regexp.MustCompile(`^([a-z_]+) ?\(>= ?([0-9.]+)([KMGT]?)B?\)`)
	tunerMore    = regexp.MustCompile(`^([a-z_]+) ?\(> ?([0-9.]+)([KMGT]?)B?[,)]`)
	tunerLess    = regexp.MustCompile(`^([a-z_]+) ?\(< ?([0-9.]+)([KMGT]?)B?\)`)
	tunerEqual   = regexp.MustCompile(`^([a-z_]+) (?:should be )?\(= ?([0-9.]+)([KMGT]?)B?\)`)
	tunerEqualNS = regexp.MustCompile(`^([a-z_]+)\(= ?([0-9.]+)\)`)
	tunerStartAt = regexp.MustCompile(`^([a-z_]+) \(start at ([0-9]+)\)`)
	tunerDefCmp  = regexp.MustCompile(`^([a-z_]+) ?\(([0-9]+)\) ?> ?([0-9]+)`)
	tunerAssign  = regexp.MustCompile(`^([a-z_]+) ?= ?([A-Za-z0-9]+)$`)
	tunerPlain   = regexp.MustCompile(`^([a-z_]+) \(([0-9.]+)([KMGT]?)B?\)$`)
	tunerBetween = regexp.MustCompile(`^([a-z_]+) between ([0-9]+) and ([0-9]+)`)
)

// observability are settings MySQLTuner proposes for diagnostics, not
// speed: left out, as the audit's are from its own configuration.
var observability = map[string]bool{"performance_schema": true, "long_query_time": true, "slow_query_log": true}

// parseTuner makes MySQLTuner's lines a configuration for a server with
// the running variables. MySQLTuner often names a bound, not a value:
// ">= X" and "= X" are taken as X; "> X" as twice the running value (or
// X when larger), "< X" as half, as someone following it one step would;
// sizes are rounded up to a MiB (the buffer pool to its 128 MiB chunks).
func parseTuner(lines []string, running map[string]string, fixed map[string]string) *tunerAdvice {
	a := &tunerAdvice{Lines: lines, Config: knobsearch.Config{}}
	for _, l := range lines {
		name, value, why := tunerValue(l, running)
		switch {
		case name == "":
			a.Left = append(a.Left, tunerLine{Line: l, Why: why})
			continue
		case observability[name]:
			why = "observability, not speed (left out, as from the audit's configuration)"
		case fixed[name] != "":
			why = "fixed by the contest's rules"
		case running[name] == "":
			why = "this server has no such variable"
		case value == "":
			if why == "" {
				why = "no value to set"
			}
		case mysqlvar.Equal(running[name], value):
			why = "already so"
		}
		if why != "" {
			a.Left = append(a.Left, tunerLine{Line: l, Name: name, Value: value, Why: why})
			continue
		}
		a.Config[name] = value
		a.Taken = append(a.Taken, tunerLine{Line: l, Name: name, Value: value, Why: "taken"})
	}
	return a
}

// tunerValue reads one line: the variable, the value to set, or why
// there is none.
func tunerValue(l string, running map[string]string) (name, value, why string) {
	size := func(name, num, unit string) string {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return ""
		}
		shift := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[unit]
		n := f * shift
		step := 1.0
		switch {
		case name == "innodb_buffer_pool_size":
			step = 128 << 20
		case unit != "":
			step = 1 << 20
		}
		if unit == "K" {
			step = 1 << 10
		}
		return strconv.FormatInt(int64(math.Ceil(n/step)*step), 10)
	}
	run := func(name string) float64 {
		n, _ := mysqlvar.ParseInt(running[name])
		return float64(n)
	}
	switch {
	case tunerAtLeast.MatchString(l):
		m := tunerAtLeast.FindStringSubmatch(l)
		return m[1], size(m[1], m[2], m[3]), ""
	case tunerEqual.MatchString(l):
		m := tunerEqual.FindStringSubmatch(l)
		return m[1], size(m[1], m[2], m[3]), ""
	case tunerEqualNS.MatchString(l):
		m := tunerEqualNS.FindStringSubmatch(l)
		return m[1], m[2], ""
	case tunerMore.MatchString(l):
		m := tunerMore.FindStringSubmatch(l)
		bound, _ := strconv.ParseFloat(size(m[1], m[2], m[3]), 64)
		return m[1], strconv.FormatInt(int64(math.Max(2*run(m[1]), bound)), 10), ""
	case tunerLess.MatchString(l):
		m := tunerLess.FindStringSubmatch(l)
		return m[1], strconv.FormatInt(int64(run(m[1])/2), 10), ""
	case tunerStartAt.MatchString(l):
		m := tunerStartAt.FindStringSubmatch(l)
		return m[1], m[2], ""
	case tunerDefCmp.MatchString(l):
		m := tunerDefCmp.FindStringSubmatch(l)
		return m[1], m[3], ""
	case tunerBetween.MatchString(l):
		m := tunerBetween.FindStringSubmatch(l)
		return m[1], m[2], ""
	case tunerPlain.MatchString(l):
		m := tunerPlain.FindStringSubmatch(l)
		return m[1], size(m[1], m[2], m[3]), ""
	case tunerAssign.MatchString(l):
		m := tunerAssign.FindStringSubmatch(l)
		return m[1], m[2], ""
	}
	return "", "", "not a setting"
}

// runMySQLTuner runs MySQLTuner (Debian's mysqltuner) against the server
// on 127.0.0.1:port as root, told the RAM is ramBytes (the search's
// memory budget, so both size for the same memory), and returns its
// version and "Variables to adjust". MySQLTuner 1.9.9 divides by
// innodb_buffer_pool_chunk_size, which MariaDB 10.11 reports as 0 (sized
// automatically): a copy of the script with that test extended runs
// instead (the same patch the audit's comparison test makes).
func runMySQLTuner(ctx context.Context, work string, port int, ramBytes int64) (version string, adjust []string, err error) {
	src, err := os.ReadFile("/usr/bin/mysqltuner")
	if err != nil {
		return "", nil, fmt.Errorf("mysqltuner (Debian package mysqltuner, installed by scripts/setup.sh): %w", err)
	}
	const bug = "if ( !defined( $myvar{'innodb_buffer_pool_chunk_size'} ) ) {"
	script := strings.Replace(string(src), bug, "if ( !defined( $myvar{'innodb_buffer_pool_chunk_size'} ) || !int( $myvar{'innodb_buffer_pool_chunk_size'} ) ) {", 1)
	path := filepath.Join(work, "mysqltuner")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", nil, err
	}
	if m := regexp.MustCompile(`(?:my|our) \$tunerversion\s*=\s*"([^"]+)"`).FindStringSubmatch(script); m != nil {
		version = m[1]
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "perl", path, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--user", "root",
		"--noask", "--nocolor", "--json", "--forcemem", strconv.FormatInt(ramBytes>>20, 10), "--forceswap", "0", "--skippassword")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return version, nil, fmt.Errorf("mysqltuner: %w: %s", err, lastLine(string(ee.Stderr)))
		}
		return version, nil, fmt.Errorf("mysqltuner: %w", err)
	}
	var v struct {
		AdjustVariables []string `json:"AdjustVariables"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return version, nil, fmt.Errorf("mysqltuner --json: %w", err)
	}
	return version, v.AdjustVariables, nil
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}
