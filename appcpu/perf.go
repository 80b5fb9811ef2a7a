package appcpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultFreq is perf's sampling frequency: 999 Hz, off the beat of
// timers that fire at round rates.
const DefaultFreq = 999

// PerfOptions configure the perf sampler.
type PerfOptions struct {
	// PIDs are the app's processes (their threads are sampled; children
	// started after Start are not: give them all).
	PIDs []int
	// Freq is the sampling frequency (default DefaultFreq).
	Freq int
	// Perf is the perf binary (default "perf" on PATH).
	Perf string
}

// Perf samples processes with perf record.
type Perf struct {
	opt    PerfOptions
	dir    string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
	// wallAtMono ties CLOCK_MONOTONIC to the wall clock.
	monoNs int64
	wall   time.Time
	// started are the processes under the sampled ones at Start.
	started map[int]bool
}

// NewPerf returns a perf sampler of opt.PIDs.
func NewPerf(opt PerfOptions) *Perf {
	if opt.Freq <= 0 {
		opt.Freq = DefaultFreq
	}
	if opt.Perf == "" {
		opt.Perf = "perf"
	}
	return &Perf{opt: opt}
}

// Name is "perf".
func (p *Perf) Name() string { return "perf" }

// Start runs perf record on the processes until Stop.
func (p *Perf) Start(ctx context.Context) error {
	if len(p.opt.PIDs) == 0 {
		return errors.New("perf: no process to sample (give --app-pid or --app-listen)")
	}
	bin, err := exec.LookPath(p.opt.Perf)
	if err != nil {
		return fmt.Errorf("perf is not installed (Debian: apt-get install linux-perf): %w", err)
	}
	for _, pid := range p.opt.PIDs {
		if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("perf: process %d: %w", pid, err)
		}
	}
	if p.dir, err = os.MkdirTemp("", "stacktune-perf-"); err != nil {
		return err
	}
	pids := make([]string, len(p.opt.PIDs))
	for i, pid := range p.opt.PIDs {
		pids[i] = strconv.Itoa(pid)
	}
	data := filepath.Join(p.dir, "perf.data")
	p.cmd = exec.Command(bin, "record", "-e", "cpu-clock", "-F", strconv.Itoa(p.opt.Freq), "-g", "-k", "CLOCK_MONOTONIC",
		"-p", strings.Join(pids, ","), "-o", data)
	p.cmd.Stderr = &p.stderr
	p.cmd.Stdout = &p.stderr
	// Its own process group, so that the user's ^C reaches stacktune,
	// which stops it; ended with stacktune should stacktune die first.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		os.RemoveAll(p.dir)
		return err
	}
	p.wall, p.monoNs = time.Now(), ts.Nano()
	p.started = map[int]bool{}
	for _, pid := range WithChildren(p.opt.PIDs) {
		p.started[pid] = true
	}
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(p.dir)
		return fmt.Errorf("perf record: %w", err)
	}
	p.done = make(chan error, 1)
	go func() { p.done <- p.cmd.Wait() }()
	// perf writes its file's header once its events are open.
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-p.done:
			os.RemoveAll(p.dir)
			return fmt.Errorf("perf record stopped at once: %v: %s", err, lastLines(p.stderr.String(), 5))
		case <-ctx.Done():
			p.kill()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if fi, err := os.Stat(data); err == nil && fi.Size() > 0 {
			time.Sleep(100 * time.Millisecond) // its events attached to every thread
			return nil
		}
		if time.Now().After(deadline) {
			p.kill()
			return fmt.Errorf("perf record did not start within 10s: %s", lastLines(p.stderr.String(), 5))
		}
	}
}

func (p *Perf) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
		<-p.done
	}
	os.RemoveAll(p.dir)
}

// Stop ends perf record and reads its samples with perf script.
func (p *Perf) Stop(ctx context.Context) (*Capture, error) {
	if p.cmd == nil {
		return nil, errors.New("perf: not started")
	}
	defer os.RemoveAll(p.dir)
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	data := filepath.Join(p.dir, "perf.data")
	if fi, err := os.Stat(data); err != nil || fi.Size() == 0 {
		return nil, fmt.Errorf("perf record wrote nothing: %s", lastLines(p.stderr.String(), 5))
	}
	cmd := exec.CommandContext(ctx, p.opt.Perf, "script", "-i", data, "--ns", "-F", "comm,pid,tid,time,period,ip,sym,dso")
	var serr bytes.Buffer
	cmd.Stderr = &serr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	c := NewCapture("perf")
	c.PIDs = append([]int(nil), p.opt.PIDs...)
	st, perr := ParsePerfScript(out, c, p.clock)
	werr := cmd.Wait()
	if perr != nil {
		return nil, perr
	}
	if werr != nil {
		return nil, fmt.Errorf("perf script: %v: %s", werr, lastLines(serr.String(), 5))
	}
	period := time.Second / time.Duration(p.opt.Freq)
	for i := range c.Samples {
		if c.Samples[i].Weight == 0 {
			c.Samples[i].Weight = period
		}
	}
	c.Symbols = SymbolsOf(st)
	var maps []string
	for _, pid := range p.opt.PIDs {
		if _, err := os.Stat(fmt.Sprintf("/tmp/perf-%d.map", pid)); err == nil {
			maps = append(maps, strconv.Itoa(pid))
		}
	}
	newProcs := 0
	for _, pid := range WithChildren(p.opt.PIDs) {
		if !p.started[pid] {
			newProcs++
		}
	}
	if newProcs > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d process(es) started under the app's during the run were not sampled (perf follows the processes it was given: a pool that forks workers on demand, such as php-fpm's pm = dynamic or ondemand, loses their CPU; pm = static keeps them)", newProcs))
	}
	if len(maps) > 0 {
		c.Notes = append(c.Notes, "frames of JIT-compiled code named from the runtime's perf map (/tmp/perf-PID.map) of process "+strings.Join(maps, ", "))
	}
	if st.Unknown > 0 && st.Frames > 0 && st.Unknown*5 >= st.Frames {
		c.Notes = append(c.Notes, fmt.Sprintf("%.0f%% of the frames have no symbol (stripped binaries, JIT code without a perf map): they show as [binary] or [unknown]", 100*float64(st.Unknown)/float64(st.Frames)))
	}
	return c, nil
}

// clock turns a CLOCK_MONOTONIC timestamp into wall time.
func (p *Perf) clock(ns int64) time.Time {
	return p.wall.Add(time.Duration(ns - p.monoNs))
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " / ")
}
