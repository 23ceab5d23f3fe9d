package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	if _, ok := processCPU(pid); !ok {
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
	database map[int]float64
}

func (m cpuMeter) read() cpuReading {
	var s cpuReading
	s.server, _ = processCPU(m.pid)
	if !m.postgres {
		return s
	}
	s.database = map[int]float64{}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		if name, err := os.ReadFile(c); err != nil || strings.TrimSpace(string(name)) != "postgres" {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		if err != nil {
			continue
		}
		if sec, ok := processCPU(pid); ok {
			s.database[pid] = sec
		}
	}
	return s
}

// since is the CPU spent between two readings. Processes that ended in
// between (PostgreSQL's autovacuum workers, other clients' backends) or
// started in between are not in it, nor a pid reused in between.
func (s cpuReading) since(before cpuReading) cpuSample {
	d := cpuSample{server: s.server - before.server}
	for pid, sec := range s.database {
		if b, ok := before.database[pid]; ok && sec >= b {
			d.database += sec - b
		}
	}
	return d
}

// plus is the CPU of two spans together.
func (s cpuSample) plus(o cpuSample) cpuSample {
	return cpuSample{s.server + o.server, s.database + o.database}
}

// processCPU is the user and system CPU seconds a process has spent.
func processCPU(pid int) (float64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return statCPU(string(data))
}

// userHz is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const userHz = 100

// statCPU reads utime and stime (fields 14 and 15) from a /proc/PID/stat
// line; the command (field 2, in parentheses) may hold spaces.
func statCPU(stat string) (float64, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:]) // from field 3, the state
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return float64(utime+stime) / userHz, true
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
