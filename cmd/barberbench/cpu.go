package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuMeter reads the CPU time spent so far by the server (--pid) and, when
// the database is on this machine, by every PostgreSQL process: the work a
// phase cost, divided by its requests, is steadier on a shared machine
// than its throughput, which other tenants' load moves.
type cpuMeter struct {
	pid      int
	postgres bool // count the processes named postgres
}

// newCPUMeter meters the server pid and, for a PostgreSQL database at a
// loopback address, the database's processes; ok is false where /proc
// cannot tell (no --pid, not Linux).
func newCPUMeter(pid int, databaseURL string) (cpuMeter, bool) {
	if pid <= 0 {
		return cpuMeter{}, false
	}
	if _, ok := readProc(pid); !ok {
		return cpuMeter{}, false
	}
	m := cpuMeter{pid: pid}
	if u, err := url.Parse(databaseURL); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		host := u.Hostname()
		ip := net.ParseIP(host)
		m.postgres = host == "localhost" || (ip != nil && ip.IsLoopback())
	}
	return m, true
}

// cpuSample is CPU seconds spent by the server and the database.
type cpuSample struct{ server, database float64 }

// cpuReading is the CPU seconds spent so far by the server, and by each
// PostgreSQL process by pid.
type cpuReading struct {
	server   float64
	database map[int]procCPU
}

// procCPU is a process's CPU seconds so far and when it started (in ticks
// since boot), which tells a pid reused in between from the same process.
type procCPU struct {
	sec   float64
	start uint64
}

func (m cpuMeter) read() cpuReading {
	var s cpuReading
	if p, ok := readProc(m.pid); ok {
		s.server = p.sec
	}
	if !m.postgres {
		return s
	}
	s.database = map[int]procCPU{}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		if name, err := os.ReadFile(c); err != nil || strings.TrimSpace(string(name)) != "postgres" {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			s.database[pid] = p
		}
	}
	return s
}

// since is the CPU spent between two readings. A process that started in
// between (a connection pool's backends, opened as the phase begins) is
// counted whole, and so is one that took the pid of a process that ended;
// what a process that ended in between spent (an autovacuum worker, a
// connection closed) is not in it: /proc forgets it.
func (s cpuReading) since(before cpuReading) cpuSample {
	d := cpuSample{server: s.server - before.server}
	for pid, p := range s.database {
		b, ok := before.database[pid]
		switch {
		case !ok || b.start != p.start:
			d.database += p.sec
		case p.sec >= b.sec:
			d.database += p.sec - b.sec
		}
	}
	return d
}

// plus is the CPU of two spans together.
func (s cpuSample) plus(o cpuSample) cpuSample {
	return cpuSample{s.server + o.server, s.database + o.database}
}

// readProc is the user and system CPU seconds a process has spent, and
// its start time.
func readProc(pid int) (procCPU, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procCPU{}, false
	}
	return statCPU(string(data))
}

// userHz is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const userHz = 100

// statCPU reads utime and stime (fields 14 and 15) and starttime (field
// 22) from a /proc/PID/stat line; the command (field 2, in parentheses) may
// hold spaces.
func statCPU(stat string) (procCPU, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return procCPU{}, false
	}
	f := strings.Fields(stat[i+1:]) // from field 3, the state
	if len(f) < 20 {
		return procCPU{}, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procCPU{}, false
	}
	return procCPU{sec: float64(utime+stime) / userHz, start: start}, true
}

// PhaseCPU is the CPU time a request of a phase cost, in milliseconds:
// barberd's and, with the database on this machine, PostgreSQL's. It
// moves less with other tenants' load than throughput.
type PhaseCPU struct {
	ServerMs   float64 `json:"server_ms"`
	DatabaseMs float64 `json:"database_ms,omitempty"`
	Database   bool    `json:"database"`
}

// perRequest divides a phase's CPU by its requests and notes it in rep;
// nil without a meter or requests.
func (b *bench) perRequest(rep *Report, phase string, s cpuSample, n int) *PhaseCPU {
	if !b.metered || n == 0 {
		return nil
	}
	// In µs: a warm read costs tens of them.
	c := &PhaseCPU{ServerMs: round3(s.server * 1000 / float64(n)), Database: b.meter.postgres}
	note := fmt.Sprintf("CPU a request during %s (/proc): barberd %.3f ms", phase, c.ServerMs)
	if c.Database {
		c.DatabaseMs = round3(s.database * 1000 / float64(n))
		note += fmt.Sprintf(", PostgreSQL %.3f ms", c.DatabaseMs)
	}
	rep.Notes = append(rep.Notes, note)
	return c
}

// floorStats is the row of a floor phase that recorded its requests under
// name in rec, with the CPU a request cost since cpu0 (noted in rep as
// label's); nil when the phase recorded none.
func (b *bench) floorStats(rep *Report, rec *recorder, wall time.Duration, cpu0 cpuReading, name, phase, label string) *EndpointStats {
	s := rec.series[name]
	if s == nil {
		return nil
	}
	st := s.stats(name, phase, wall)
	st.CPU = b.perRequest(rep, label, b.meter.read().since(cpu0), st.Requests)
	return &st
}
