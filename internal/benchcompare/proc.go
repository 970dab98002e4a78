package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on every Linux
// this runs on; reading it needs sysconf, which pure Go lacks).
const clockTicks = 100

// server is a process the benchmark started, in a process group of its own so that stopping
// it also stops what it spawned (pyenv's moto_server shim runs python as a child).
type server struct {
	name string
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

// startServer runs argv pinned to cpu (taskset -c; no pinning when cpu is empty), its output
// going to logPath. pidFile, when set, gets the process group's ID appended, so a shell trap
// can stop the group even if this program is killed.
func startServer(name, cpu string, argv []string, base, logPath, pidFile string) (*server, error) {
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &server{name: name, cmd: cmd, base: base, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	if pidFile != "" {
		if f, err := os.OpenFile(pidFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, cmd.Process.Pid)
			f.Close()
		}
	}
	return s, nil
}

// pid is the process group leader's pid.
func (s *server) pid() int { return s.cmd.Process.Pid }

// waitReady polls check until it passes, the process exits, or timeout.
func (s *server) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("%s exited before it was ready (see its log)", s.name)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if last = check(ctx); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %v: %w", s.name, timeout, last)
}

// stop sends SIGTERM to the group, then SIGKILL after a grace period.
func (s *server) stop() {
	pgid := s.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	// A child the leader left behind (python under the shim) gets the same treatment.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// procTree is pid and its descendants, read from /proc.
func procTree(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, err := statFields(p); err == nil && len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			parent[p] = pp
		}
	}
	tree := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if slices.Contains(tree, pp) && !slices.Contains(tree, p) {
				tree = append(tree, p)
				changed = true
			}
		}
	}
	return tree
}

// statFields are the fields of /proc/PID/stat after the command name: [0] is the state
// (field 3), so field n is at index n-3.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// procCPU is the CPU time (user+system, all threads) used so far by one process.
func procCPU(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// cpuSample is the CPU time used so far by a process tree, two ways: utime+stime of each
// process (/proc/PID/stat: every thread, living or not, in 10 ms ticks), and each living
// thread's time on the CPU (/proc/PID/task/TID/schedstat, in ns).
type cpuSample struct {
	ticks   time.Duration
	threads map[int]time.Duration
}

// sampleCPU reads the CPU time of the processes pids (procTree(pid) for a server with what
// it spawned).
func sampleCPU(pids []int) cpuSample {
	s := cpuSample{threads: map[int]time.Duration{}}
	for _, p := range pids {
		if d, err := procCPU(p); err == nil {
			s.ticks += d
		}
		dir := filepath.Join("/proc", strconv.Itoa(p), "task")
		tasks, _ := os.ReadDir(dir)
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) == 0 {
				continue
			}
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				s.threads[tid] = time.Duration(ns)
			}
		}
	}
	return s
}

// cpuBetween is the CPU time used from a to b. The threads' nanosecond counts are exact but
// lose threads that ended (a server that runs a thread per connection or request); utime and
// stime keep those, in 10 ms ticks. So: the nanoseconds, unless a thread of a is gone or the
// ticks say clearly more.
func cpuBetween(a, b cpuSample) time.Duration {
	coarse := b.ticks - a.ticks
	if len(a.threads) == 0 {
		return coarse
	}
	var sa, sb time.Duration
	for tid, d := range a.threads {
		if _, ok := b.threads[tid]; !ok {
			return coarse
		}
		sa += d
	}
	for _, d := range b.threads {
		sb += d
	}
	if precise := sb - sa; coarse <= precise+3*time.Second/clockTicks {
		return precise
	}
	return coarse
}

// memory is what /proc/PID/status says of a process's resident memory.
type memory struct {
	RSS, HWM int64 // bytes: VmRSS now, VmHWM the peak
}

// treeMemory sums VmRSS and VmHWM over pid and its descendants.
func treeMemory(pid int) (memory, error) {
	var m memory
	for _, p := range procTree(pid) {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(p), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			name, rest, ok := strings.Cut(sc.Text(), ":")
			if !ok || (name != "VmRSS" && name != "VmHWM") {
				continue
			}
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				continue
			}
			kb, _ := strconv.ParseInt(fields[0], 10, 64)
			if name == "VmRSS" {
				m.RSS += kb << 10
			} else {
				m.HWM += kb << 10
			}
		}
		f.Close()
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	return m, nil
}

// httpCheck passes when GET url answers 200.
func httpCheck(hc *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		status, b, err := send(ctx, hc, http.MethodGet, url, nil, nil, true)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return statusError("GET "+url, status, b)
		}
		return nil
	}
}

// coreTimes are the busy and total jiffies of some CPUs, from /proc/stat.
type coreTimes struct{ busy, total int64 }

// readCoreTimes sums /proc/stat over the CPUs of a taskset list ("0", "0,2", "0-1").
func readCoreTimes(list string) coreTimes {
	want := map[string]bool{}
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			continue
		}
		for c := a; c <= b; c++ {
			want["cpu"+strconv.Itoa(c)] = true
		}
	}
	var t coreTimes
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !want[f[0]] {
			continue
		}
		// user nice system idle iowait irq softirq steal
		for i, v := range f[1:9] {
			n, _ := strconv.ParseInt(v, 10, 64)
			t.total += n
			if i != 3 && i != 4 {
				t.busy += n
			}
		}
	}
	return t
}

// share is the busy fraction of the CPUs between a and b.
func (a coreTimes) share(b coreTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total)
}

// otherCPU samples the CPU time of every process outside some process trees (this program
// and the servers it measures): other work on the machine that would skew the figures.
type otherCPU map[int]time.Duration

// sampleOthers reads the CPU time of every process not in mine.
func sampleOthers(mine []int) otherCPU {
	skip := map[int]bool{}
	for _, p := range mine {
		skip[p] = true
	}
	out := otherCPU{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || skip[p] {
			continue
		}
		if d, err := procCPU(p); err == nil {
			out[p] = d
		}
	}
	return out
}

// since is the CPU time the other processes used from a to o (a process new in o counts
// with all it used; one that ended in between is lost).
func (o otherCPU) since(a otherCPU) time.Duration {
	var sum time.Duration
	for p, d := range o {
		sum += d - a[p]
	}
	return sum
}
