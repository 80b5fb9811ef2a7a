package capacity

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every error about an input that cannot be
// planned with (negative, zero where a count is needed, absurdly large).
var ErrInvalid = errors.New("invalid plan input")

// Closer says which side of an app → MySQL connection closes it first and so
// holds its TIME_WAIT for 60 seconds.
type Closer string

const (
	// CloserWeb: the web server (the MySQL client) closes first. This is
	// non-persistent PHP: mysqlnd sends COM_QUIT and closes its socket at
	// the end of the request, an active close (the PHP + MySQL TIME_WAIT write-up).
	CloserWeb Closer = "web"
	// CloserDB: the MySQL server closes first (for example connections ended
	// by wait_timeout, or a client that waits for the server's FIN).
	CloserDB Closer = "db"
)

// Codes lists the sides (docs/json.md).
func (Closer) Codes() []string { return []string{string(CloserWeb), string(CloserDB)} }

// Limits beyond which an input is taken for a typo rather than a plan.
const (
	maxRate         = 1e8    // requests per second
	maxServers      = 100000 // web servers
	maxWorkers      = 100000 // workers per web server
	maxResponseTime = time.Hour
	maxFiles        = 1 << 20 // fs.nr_open's default: no process may open more without raising it
	maxCacheClients = 1000
	maxAdmin        = 10000
	maxTimeWait     = time.Hour
	maxHeadroom     = 10
	maxTWBuckets    = 1 << 31
	maxCores        = 4096
)

// Figures fixed by the software, named where they are used.
const (
	// LiveSocketsPerWorker is the TIME_WAIT write-up's "httpd 数の4倍": each worker has a
	// client connection and a MySQL connection (2), doubled for client
	// connections opened anew when keep-alive does not hold (256 × 4 = 1024).
	LiveSocketsPerWorker = 4
	// mysqlMaxConnections is max_connections' maximum (MySQL and MariaDB).
	mysqlMaxConnections = 100000
	// threadCacheMax is thread_cache_size's maximum in MySQL.
	threadCacheMax = 16384
	// memcachedReserve is added to memcached -c: memcached refuses a
	// connection when curr_conns + reserved_fds >= -c - 1 (memcached.c), and
	// reserved_fds is 5 per worker thread (thread.c), 20 at the default -t 4;
	// the rest is room for its listeners and a few monitoring clients.
	memcachedReserve = 32
	// memcachedDefaultConns is memcached's default -c.
	memcachedDefaultConns = 1024
	// busyWarn is the worker utilisation above which queueing delay grows
	// quickly (waiting time in a queue grows as 1/(1-utilisation)).
	busyWarn = 0.8
	// idleNote is the utilisation below which workers are mostly idle.
	idleNote = 0.1
)

// Options are the inputs of a capacity plan. Start from DefaultOptions:
// the zero value is not a valid plan.
type Options struct {
	// Rate is the target request rate over all web servers, in requests
	// per second (the peak to survive, not the daily mean). The TIME_WAIT write-up's
	// "900 req/s per web server on 100 servers" is Rate 90000.
	Rate float64
	// Servers is the number of web servers; the load balancer is assumed
	// to spread Rate evenly over them.
	Servers int
	// Workers is the number of request workers per web server: PHP-FPM
	// pm.max_children, Apache MaxRequestWorkers (MaxClients). Each holds at
	// most one MySQL connection.
	Workers int
	// ResponseTime is the mean response time of a request.
	ResponseTime time.Duration
	// Persistent says app → MySQL connections stay open across requests.
	// The default, false, is one connection per request, as non-persistent
	// PHP does: a TIME_WAIT per request on the side that closes first.
	Persistent bool
	// Closer is the side that closes a per-request connection first.
	Closer Closer
	// OtherFiles is the number of files mysqld needs besides connections
	// (tables, logs); 0 derives it from TableOpenCache (MySQLOtherFiles).
	// The PHP + MySQL TIME_WAIT write-up: open_files_limit 5000 at the default max_connections 151,
	// so 5000 - 151 = 4849.
	OtherFiles int
	// TableOpenCache is the server's table_open_cache (0: unknown), from
	// which OtherFiles is derived when it is 0.
	TableOpenCache int
	// PerServerRate is the measured request rate one web server sustains
	// (0 when not measured); it gives the number of servers needed.
	PerServerRate float64
	// CacheClientsPerWorker is the number of memcached/Redis connections
	// each worker opens (0 when there is no cache).
	CacheClientsPerWorker int
	// TimeWait is how long a closed connection stays in TIME_WAIT: 60
	// seconds, TCP_TIMEWAIT_LEN compiled into Linux. tcp_fin_timeout does
	// not change it.
	TimeWait time.Duration
	// PortRange is the web servers' current net.ipv4.ip_local_port_range.
	PortRange PortRange
	// LiveSockets is the number of open sockets per web server besides
	// TIME_WAIT; 0 means LiveSocketsPerWorker × Workers.
	LiveSockets int
	// AdminConnections is added to max_connections for people and
	// monitoring (MySQL also keeps one extra for CONNECTION_ADMIN/SUPER).
	AdminConnections int
	// TWBuckets is the hosts' current net.ipv4.tcp_max_tw_buckets; plan
	// never suggests less.
	TWBuckets int
	// Cores is the CPUs of one web server and CPUPerRequest the CPU time
	// one request uses on it (the app's CPU seconds over requests served,
	// from a load test or the audit's app-workers evidence): with both,
	// plan sizes workers to the cores (cpu-workers) and can say decrease.
	// 0 for either: not known.
	Cores         int
	CPUPerRequest time.Duration
	// Headroom multiplies the request rate (1.2 plans for 20% more than
	// Rate). Counts bounded by workers (max_connections, memcached -c) are
	// exact maxima and take no headroom.
	Headroom float64
}

// DefaultOptions are the defaults: the TIME_WAIT write-up's host where it has one.
func DefaultOptions() Options {
	return Options{
		Closer:                CloserWeb,
		CacheClientsPerWorker: 1,
		TimeWait:              60 * time.Second,
		PortRange:             DefaultPortRange,
		TWBuckets:             4096,
		Headroom:              1,
	}
}

// Validate reports every input that cannot be planned with, in one error
// wrapping ErrInvalid.
func (o Options) Validate() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(o.Rate) || o.Rate <= 0:
		bad("rate must be above 0 requests per second (got %v)", o.Rate)
	case o.Rate > maxRate:
		bad("rate %v requests per second is beyond any web stack (at most %v): check the unit, it is per second", o.Rate, maxRate)
	}
	switch {
	case o.Servers < 1:
		bad("servers must be at least 1 (got %d)", o.Servers)
	case o.Servers > maxServers:
		bad("servers %d is more than %d", o.Servers, maxServers)
	}
	switch {
	case o.Workers < 1:
		bad("workers per server must be at least 1 (got %d)", o.Workers)
	case o.Workers > maxWorkers:
		bad("workers per server %d is more than %d", o.Workers, maxWorkers)
	}
	switch {
	case o.ResponseTime <= 0:
		bad("response time must be above 0 (got %v): take the mean from the access log (stacktune http)", o.ResponseTime)
	case o.ResponseTime > maxResponseTime:
		bad("response time %v is more than %v", o.ResponseTime, maxResponseTime)
	}
	if o.Closer != CloserWeb && o.Closer != CloserDB {
		bad("closer %q: use %q (the web server closes first) or %q", o.Closer, CloserWeb, CloserDB)
	}
	if o.OtherFiles < 0 || o.OtherFiles > maxFiles {
		bad("other files must be 0 to %d (got %d)", maxFiles, o.OtherFiles)
	}
	if o.TableOpenCache < 0 || o.TableOpenCache > maxFiles {
		bad("table_open_cache must be 0 to %d (got %d)", maxFiles, o.TableOpenCache)
	}
	switch {
	case !finite(o.PerServerRate) || o.PerServerRate < 0 || o.PerServerRate > maxRate:
		bad("per-server rate must be 0 (not measured) to %v (got %v)", maxRate, o.PerServerRate)
	case o.PerServerRate > 0 && finite(o.Rate) && finite(o.Headroom) && o.Rate*o.Headroom/o.PerServerRate > maxServers:
		bad("at %v requests per second per server, %v requests per second need more than %d servers: check --per-server-rate (it is per second, measured on one server)",
			o.PerServerRate, o.Rate*o.Headroom, maxServers)
	}
	if o.CacheClientsPerWorker < 0 || o.CacheClientsPerWorker > maxCacheClients {
		bad("cache clients per worker must be 0 (no cache) to %d (got %d)", maxCacheClients, o.CacheClientsPerWorker)
	}
	switch {
	case o.TimeWait <= 0:
		bad("TIME_WAIT must be above 0 (got %v); on Linux it is 60s", o.TimeWait)
	case o.TimeWait > maxTimeWait:
		bad("TIME_WAIT %v is more than %v; on Linux it is 60s", o.TimeWait, maxTimeWait)
	}
	if p := o.PortRange.problem(); p != "" {
		errs = append(errs, p)
	}
	if o.LiveSockets < 0 || o.LiveSockets > maxFiles {
		bad("live sockets must be 0 (%d per worker) to %d (got %d)", LiveSocketsPerWorker, maxFiles, o.LiveSockets)
	}
	if o.AdminConnections < 0 || o.AdminConnections > maxAdmin {
		bad("admin connections must be 0 to %d (got %d)", maxAdmin, o.AdminConnections)
	}
	if o.TWBuckets < 0 || o.TWBuckets > maxTWBuckets {
		bad("current tcp_max_tw_buckets must be 0 to %d (got %d)", maxTWBuckets, o.TWBuckets)
	}
	switch {
	case !finite(o.Headroom) || o.Headroom < 1:
		bad("headroom must be at least 1 (got %v): below 1 plans for less than the target rate", o.Headroom)
	case o.Headroom > maxHeadroom:
		bad("headroom %v is more than %d times the target rate", o.Headroom, maxHeadroom)
	}
	if o.Cores < 0 || o.Cores > maxCores {
		bad("cores must be 0 (not known) to %d (got %d)", maxCores, o.Cores)
	}
	switch {
	case o.CPUPerRequest < 0 || o.CPUPerRequest > maxResponseTime:
		bad("CPU per request must be 0 (not known) to %v (got %v)", maxResponseTime, o.CPUPerRequest)
	case o.CPUPerRequest > 0 && o.ResponseTime > 0 && o.CPUPerRequest > o.ResponseTime*11/10:
		bad("CPU per request %v is more than the response time %v: a request runs on one core at a time, so its CPU time cannot exceed its duration", o.CPUPerRequest, o.ResponseTime)
	}
	if (o.Cores > 0) != (o.CPUPerRequest > 0) {
		bad("give cores and CPU per request together (workers are sized from both)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	return nil
}

// Report is a capacity plan: the inputs it used and one result per figure.
type Report struct {
	Inputs  Inputs   `json:"inputs"`
	Results []Result `json:"results"`
}

// Inputs echo the options a plan used, defaults and derived values filled
// in.
type Inputs struct {
	Rate                  float64 `json:"rate"`
	Headroom              float64 `json:"headroom"`
	PlannedRate           float64 `json:"planned_rate"`
	Servers               int     `json:"servers"`
	Workers               int     `json:"workers"`
	ResponseTime          float64 `json:"response_time_s"`
	Persistent            bool    `json:"persistent"`
	Closer                Closer  `json:"closer"`
	OtherFiles            int     `json:"other_files"`
	TableOpenCache        int     `json:"table_open_cache,omitempty"`
	PerServerRate         float64 `json:"per_server_rate"`
	CacheClientsPerWorker int     `json:"cache_clients_per_worker"`
	TimeWait              float64 `json:"time_wait_s"`
	PortRange             string  `json:"port_range"`
	LiveSockets           int     `json:"live_sockets"`
	LiveSocketsDerived    bool    `json:"live_sockets_derived"`
	AdminConnections      int     `json:"admin_connections"`
	TWBuckets             int     `json:"tw_buckets"`
	Cores                 int     `json:"cores,omitempty"`
	CPUPerRequest         float64 `json:"cpu_per_request_s,omitempty"`
}

// Result is one figure of a plan, with the formula and inputs behind it.
type Result struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Formula is the rule in words; Calculation the same rule with this
	// plan's numbers.
	Formula     string   `json:"formula"`
	Calculation string   `json:"calculation"`
	Setting     *Setting `json:"setting,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// Source is where the rule comes from: a public write-up or a manual.
	Source string `json:"source"`
}

// Setting kinds.
const (
	KindSysctl        = "sysctl"
	KindMySQLVariable = "mysql-variable"
	KindSystemd       = "systemd"
	KindMemcachedFlag = "memcached-flag"
	KindAppServer     = "app-server"
	KindFleet         = "fleet"
)

// Hosts a setting applies to.
const (
	HostWeb       = "web servers"
	HostMySQL     = "MySQL server"
	HostMemcached = "memcached servers"
	HostFleet     = "load balancer"
)

// Setting is what to apply for a result.
type Setting struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Value string `json:"value"`
	// Current is the value the plan was told is in place, when it was.
	Current string `json:"current,omitempty"`
	// Host is where it applies: HostWeb, HostMySQL, HostMemcached,
	// HostFleet.
	Host string `json:"host"`
	// Where says how and in which file to apply it.
	Where string `json:"where"`
}

// Changes says the setting differs from the current value (or that the
// current value is not known).
func (s Setting) Changes() bool { return s.Current == "" || s.Current != s.Value }

// Line is the setting as it is written where it is applied.
func (s Setting) Line() string {
	switch s.Kind {
	case KindSystemd:
		return s.Name + "=" + s.Value
	case KindMemcachedFlag:
		return s.Name + " " + s.Value
	}
	return s.Name + " = " + s.Value
}

// Num formats a number without a needless fraction: 25500, 926.01, 0.010289.
func Num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(round6(x), 'f', -1, 64)
}

// round6 keeps 6 significant digits, hiding float noise such as
// 926.0099999999999.
func round6(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}

// ceil rounds up, ignoring float noise: 900 × 60 computed as
// 54000.000000001 is 54000, not 54001.
func ceil(x float64) int {
	r := math.Round(x)
	if math.Abs(x-r) <= 1e-9*math.Max(1, math.Abs(x)) {
		return int(r)
	}
	return int(math.Ceil(x))
}

// nextPow2 is the smallest power of two at or above n (n >= 1).
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
