package capacity

import "fmt"

// Result IDs, in the order a plan lists them.
const (
	IDConcurrency      = "concurrency"
	IDServersNeeded    = "servers-needed"
	IDMaxConnections   = "max-connections"
	IDOpenFilesLimit   = "open-files-limit"
	IDMySQLLimitNOFILE = "mysqld-limitnofile"
	IDThreadCacheSize  = "thread-cache-size"
	IDTimeWaitWeb      = "time-wait-web"
	IDSocketsWeb       = "sockets-web"
	IDPortRange        = "port-range"
	IDTimeWaitDB       = "time-wait-db"
	IDCacheConnections = "cache-connections"
	IDCPUWorkers       = "cpu-workers"
)

// Compute validates o and works out the plan. servers-needed is present
// only with a measured PerServerRate, cache-connections only with
// CacheClientsPerWorker above 0.
func Compute(o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := newCalc(o)
	p := &Report{Inputs: c.inputs()}
	p.Results = append(p.Results, c.concurrency())
	if o.Cores > 0 && o.CPUPerRequest > 0 {
		p.Results = append(p.Results, c.cpuWorkers())
	}
	if o.PerServerRate > 0 {
		p.Results = append(p.Results, c.serversNeeded())
	}
	p.Results = append(p.Results,
		c.maxConnections(), c.openFilesLimit(), c.mysqldLimitNOFILE(), c.threadCacheSize(),
		c.timeWaitWeb(), c.socketsWeb(), c.portRange(), c.timeWaitDB())
	if o.CacheClientsPerWorker > 0 {
		p.Results = append(p.Results, c.cacheConnections())
	}
	return p, nil
}

// calc holds the figures several results share.
type calc struct {
	o           Options
	planned     float64 // Rate × Headroom
	perServer   float64 // planned / Servers
	respSec     float64
	twSec       float64
	capacity    int     // Servers × Workers
	inFlight    float64 // Little's law with headroom: planned × respSec
	live        int     // live sockets per web server
	liveDerived bool
	maxConn     int
	twWeb       int // TIME_WAIT sockets per web server
	twDB        int // TIME_WAIT sockets on the MySQL server
	sockets     int
	// other is the files mysqld needs besides connections, and how.
	other        int64
	otherFormula string
}

func newCalc(o Options) *calc {
	c := &calc{o: o}
	c.planned = o.Rate * o.Headroom
	c.perServer = c.planned / float64(o.Servers)
	c.respSec = o.ResponseTime.Seconds()
	c.twSec = o.TimeWait.Seconds()
	c.capacity = o.Servers * o.Workers
	c.inFlight = c.planned * c.respSec
	c.live = o.LiveSockets
	if c.live == 0 {
		c.live = LiveSocketsPerWorker * o.Workers
		c.liveDerived = true
	}
	c.maxConn = c.capacity + o.AdminConnections
	c.other, c.otherFormula = int64(o.OtherFiles), fmt.Sprintf("%d (given)", o.OtherFiles)
	if o.OtherFiles == 0 {
		c.other, c.otherFormula = MySQLOtherFiles(int64(o.TableOpenCache))
	}
	if !o.Persistent {
		switch o.Closer {
		case CloserWeb:
			c.twWeb = ceil(c.perServer * c.twSec)
		case CloserDB:
			c.twDB = ceil(c.planned * c.twSec)
		}
	}
	c.sockets = c.twWeb + c.live
	return c
}

func (c *calc) inputs() Inputs {
	o := c.o
	return Inputs{
		Rate: o.Rate, Headroom: o.Headroom, PlannedRate: round6(c.planned),
		Servers: o.Servers, Workers: o.Workers, ResponseTime: c.respSec,
		Persistent: o.Persistent, Closer: o.Closer, OtherFiles: int(c.other), TableOpenCache: o.TableOpenCache,
		PerServerRate: o.PerServerRate, CacheClientsPerWorker: o.CacheClientsPerWorker,
		TimeWait: c.twSec, PortRange: o.PortRange.String(),
		LiveSockets: c.live, LiveSocketsDerived: c.liveDerived,
		AdminConnections: o.AdminConnections, TWBuckets: o.TWBuckets,
		Cores: o.Cores, CPUPerRequest: o.CPUPerRequest.Seconds(),
	}
}

// rate is "90000 × 1", the planned rate as the inputs give it.
func (c *calc) rate() string { return Num(c.o.Rate) + " × " + Num(c.o.Headroom) }

func pct(share float64) string { return fmt.Sprintf("%.1f%%", share*100) }

func (c *calc) concurrency() Result {
	o := c.o
	busy := c.inFlight / float64(c.capacity)
	r := Result{
		ID: IDConcurrency, Title: "Concurrent requests (Little's law)",
		Value: round6(c.inFlight), Unit: "requests",
		Formula: "L = rate × headroom × mean response time, against the workers: servers × workers per server",
		Calculation: fmt.Sprintf("%s × %s s = %s requests in flight; workers %d × %d = %d, %s busy on average",
			c.rate(), Num(c.respSec), Num(c.inFlight), o.Servers, o.Workers, c.capacity, pct(busy)),
		Source: "Little's law (L = λW); the smartphone game backend's write-up",
	}
	// Workers per server for at most busyWarn utilisation.
	want := ceil(c.inFlight / (busyWarn * float64(o.Servers)))
	cpuBound, cpuN := false, 0
	if o.Cores > 0 && o.CPUPerRequest > 0 {
		cpuN, _ = CPUWorkers(o.Cores, o.CPUPerRequest, o.ResponseTime)
		cpuBound = want > cpuN
		want = min(want, max(cpuN, o.Workers))
	}
	switch {
	case cpuBound && busy > busyWarn:
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"%s requests are in flight for %d workers, but the cores cannot keep more than %d workers per server busy (cpu-workers): "+
				"more workers would only queue for the CPU; add servers or cut the CPU per request", Num(c.inFlight), c.capacity, cpuN))
	case c.inFlight > float64(c.capacity):
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"workers are the bottleneck: %s requests are in flight on average but there are only %d workers, so requests queue "+
				"and the response time grows until the rate falls to workers / response time = %s req/s. "+
				"Raise workers to %d per server (80%% busy) if CPU and memory allow, add servers (%d at %d workers each), or cut the response time",
			Num(c.inFlight), c.capacity, Num(float64(c.capacity)/c.respSec), want,
			ceil(c.inFlight/(busyWarn*float64(o.Workers))), o.Workers))
	case busy > busyWarn:
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"workers are %s busy on average: above %.0f%% the wait in the queue grows fast (as 1 / (1 - utilisation)) and bursts above the mean queue; "+
				"%d workers per server keep them at 80%%", pct(busy), busyWarn*100, want))
	case busy < idleNote:
		r.Notes = append(r.Notes, "workers are mostly idle: fewer would serve this rate, and more workers is not more throughput "+
			"(the smartphone game backend: 20 PHP-FPM children on 8 cores beat 50); size them from CPU time per request and cores, then load-test")
	}
	if busy > busyWarn && want != o.Workers {
		r.Setting = &Setting{Kind: KindAppServer, Name: "workers per server (pm.max_children, MaxRequestWorkers)",
			Value: fmt.Sprint(want), Current: fmt.Sprint(o.Workers), Host: HostWeb, Where: "PHP-FPM pool or Apache MPM configuration"}
	}
	r.Notes = append(r.Notes, "Little's law holds for means over a steady interval: take the rate and the mean response time from the same peak window (stacktune http)")
	return r
}

func (c *calc) serversNeeded() Result {
	o := c.o
	exact := c.planned / o.PerServerRate
	n := ceil(exact)
	r := Result{
		ID: IDServersNeeded, Title: "Web servers needed", Value: float64(n), Unit: "servers",
		Formula:     "ceil(rate × headroom / measured rate per server)",
		Calculation: fmt.Sprintf("ceil(%s / %s) = ceil(%s) = %d (now %d)", c.rate(), Num(o.PerServerRate), Num(exact), n, o.Servers),
		Setting: &Setting{Kind: KindFleet, Name: "web servers", Value: fmt.Sprint(n), Current: fmt.Sprint(o.Servers),
			Host: HostFleet, Where: "load balancer pool or autoscaling group"},
		Source: "the PHP + MySQL TIME_WAIT write-up (935 req/s measured on one server), the smartphone game backend's write-up (40 → 5-15 servers)",
	}
	switch {
	case n > o.Servers:
		r.Warnings = append(r.Warnings, fmt.Sprintf("the %d servers given are %d short of this rate; the other figures use %d servers: plan again with %d",
			o.Servers, n-o.Servers, o.Servers, n))
	case n < o.Servers:
		r.Notes = append(r.Notes, fmt.Sprintf("%d servers are more than this rate needs; the other figures use the %d given: plan again with %d to size the smaller fleet "+
			"(the smartphone game backend went from 40 web servers to 5-15, and from 60 to 30 at peak, once tuning raised the rate per server)", o.Servers, o.Servers, n))
	}
	r.Notes = append(r.Notes, "measure the rate per server on one server at a response time you accept (stacktune bench against one server), not at saturation")
	return r
}

func (c *calc) maxConnections() Result {
	o := c.o
	r := Result{
		ID: IDMaxConnections, Title: "MySQL max_connections", Value: float64(c.maxConn), Unit: "connections",
		Formula:     "servers × workers per server + admin connections",
		Calculation: fmt.Sprintf("%d × %d + %d = %d", o.Servers, o.Workers, o.AdminConnections, c.maxConn),
		Setting: &Setting{Kind: KindMySQLVariable, Name: "max_connections", Value: fmt.Sprint(c.maxConn),
			Host: HostMySQL, Where: "my.cnf [mysqld]; dynamic too: SET GLOBAL max_connections"},
		Source: "the PHP + MySQL TIME_WAIT write-up (100 × 255 = 25500); MySQL manual (max_connections)",
	}
	if c.maxConn > mysqlMaxConnections {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d is above max_connections' maximum of %d: pool connections (ProxySQL) or run fewer workers",
			c.maxConn, mysqlMaxConnections))
	}
	if o.Persistent {
		r.Notes = append(r.Notes, "persistent connections stay open while their worker lives, busy or not: every worker holds one")
	} else {
		r.Notes = append(r.Notes, "every worker can hold a connection at once when MySQL slows down, so all are counted, not the mean concurrency")
	}
	r.Notes = append(r.Notes,
		"headroom does not apply: the workers bound the count",
		"MySQL admits one connection more for an account with CONNECTION_ADMIN (SUPER) when full; add admin connections for monitoring and people",
		"per-session buffers (sort, join, read) are allocated per connection: check them against RAM at this count")
	return r
}

func (c *calc) openFiles() int {
	if c.o.OtherFiles > 0 {
		return c.o.OtherFiles + c.maxConn
	}
	n, _ := MySQLOpenFiles(int64(c.o.TableOpenCache), int64(c.maxConn))
	return int(n)
}

func (c *calc) openFilesLimit() Result {
	n := c.openFiles()
	r := Result{
		ID: IDOpenFilesLimit, Title: "MySQL open_files_limit", Value: float64(n), Unit: "files",
		Formula:     "files MySQL needs besides connections (max(5000 - 151, 10 + 2 × table_open_cache)) + max_connections",
		Calculation: fmt.Sprintf("%d + %d = %d", c.other, c.maxConn, n),
		Setting: &Setting{Kind: KindMySQLVariable, Name: "open_files_limit", Value: fmt.Sprint(n),
			Host: HostMySQL, Where: "my.cnf [mysqld]; read-only at run time, so restart; the process limit (LimitNOFILE) must allow it"},
		Source: "the PHP + MySQL TIME_WAIT write-up ((5000 - 151) + 25500 = 30349); MySQL manual (open_files_limit)",
	}
	if n > maxFiles {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d is above fs.nr_open's default of %d: raise fs.nr_open first, no process can be allowed more", n, maxFiles))
	}
	r.Notes = append(r.Notes, "files besides connections: "+c.otherFormula,
		"the TIME_WAIT write-up's mysqld had open_files_limit 5000 at the default max_connections 151, so 5000 - 151 = 4849 for tables and logs; "+
			"a larger table cache needs two per table (--table-open-cache) and the audit derives it the same way from the running server",
		"mysqld also asks the kernel for up to 5 × max_connections, but takes less when its process limit is lower without shrinking anything; "+
			"given fewer than this it lowers table_open_cache and max_connections (\"Changed limits\" in the error log). "+
			"Check SHOW GLOBAL VARIABLES after the restart (the PHP + MySQL TIME_WAIT write-up read 30349 and 25500)")
	return r
}

func (c *calc) mysqldLimitNOFILE() Result {
	n := c.openFiles()
	return Result{
		ID: IDMySQLLimitNOFILE, Title: "mysqld process file limit (systemd LimitNOFILE)", Value: float64(n), Unit: "files",
		Formula:     "open_files_limit: mysqld cannot open more files than its process limit",
		Calculation: fmt.Sprintf("%d", n),
		Setting: &Setting{Kind: KindSystemd, Name: "LimitNOFILE", Value: fmt.Sprint(n),
			Host: HostMySQL, Where: "systemctl edit mysqld (mariadb for MariaDB), [Service] section, then systemctl restart mysqld"},
		Notes: []string{
			"set it in a drop-in: systemctl edit writes /etc/systemd/system/mysqld.service.d/override.conf, which survives package upgrades " +
				"(the PHP + MySQL TIME_WAIT write-up used systemctl edit --full, a copy of the whole unit)",
			"ulimit -n in a shell does not reach a service systemd starts: only the unit's LimitNOFILE does (the PHP + MySQL TIME_WAIT write-up)",
			"fs.file-max, the limit for the whole system, must stay above every process's files (the PHP + MySQL TIME_WAIT write-up: the default 97634 was enough)",
		},
		Source: "the PHP + MySQL TIME_WAIT write-up; systemd.exec(5) (LimitNOFILE)",
	}
}

func (c *calc) threadCacheSize() Result {
	o := c.o
	def := min(100, 8+c.maxConn/100)
	r := Result{
		ID: IDThreadCacheSize, Title: "MySQL thread_cache_size", Unit: "threads",
		Source: "the smartphone game backend's write-up (thread_cache_size up to max_connections); MySQL manual (thread_cache_size)",
		Notes: []string{
			"check at peak: Threads_created should barely grow between two SHOW GLOBAL STATUS readings",
			"a thread pool (thread_handling=pool-of-threads in MariaDB or Percona Server) ignores it",
		},
	}
	var n int
	if o.Persistent {
		n = min(def, c.maxConn)
		r.Formula = "MySQL's own default, 8 + max_connections / 100 capped at 100: persistent connections rarely end, so few threads are created"
		r.Calculation = fmt.Sprintf("min(100, 8 + %d / 100) = %d", c.maxConn, n)
	} else {
		l := ceil(c.inFlight)
		n = min(c.maxConn, threadCacheMax, max(l, def))
		r.Formula = "min(max_connections, 16384, max(ceil(L), 8 + max_connections / 100 capped at 100)): " +
			"a cached thread for each connection open at once (L, one per request in flight), never more than max_connections or MySQL's maximum 16384, " +
			"never less than MySQL's own default"
		r.Calculation = fmt.Sprintf("min(%d, %d, max(ceil(%s) = %d, %d)) = %d", c.maxConn, threadCacheMax, Num(c.inFlight), l, def, n)
		r.Notes = append([]string{fmt.Sprintf("with a connection per request MySQL gets %s new connections per second; each finds a cached thread "+
			"instead of creating one while the cache covers the connections open at once. A thread is only cached after it existed, so the smartphone game backend's "+
			"thread_cache_size = max_connections costs little, but past the connections open at once it buys nothing", Num(c.planned))}, r.Notes...)
	}
	r.Value = float64(n)
	r.Setting = &Setting{Kind: KindMySQLVariable, Name: "thread_cache_size", Value: fmt.Sprint(n),
		Host: HostMySQL, Where: "my.cnf [mysqld]; dynamic too: SET GLOBAL thread_cache_size"}
	return r
}

// twBuckets is the tcp_max_tw_buckets to set for count TIME_WAIT sockets:
// the current value when it holds them (never lower it), else the next
// power of two, as the TIME_WAIT write-up's 65536 for 54000.
func twBuckets(count, current int) int {
	if count <= current {
		return current
	}
	return nextPow2(count)
}

func (c *calc) twCalc(count int) string {
	b := twBuckets(count, c.o.TWBuckets)
	if b == c.o.TWBuckets {
		return fmt.Sprintf("tcp_max_tw_buckets %d already holds %d: keep it", b, count)
	}
	return fmt.Sprintf("tcp_max_tw_buckets >= %d → next power of two %d (now %d)", count, b, c.o.TWBuckets)
}

func (c *calc) twWarning(r *Result, count int, host string) {
	if count > c.o.TWBuckets {
		r.Warnings = append(r.Warnings, fmt.Sprintf("tcp_max_tw_buckets %d is below the %d TIME_WAIT sockets on the %s: past it the kernel destroys "+
			"TIME_WAIT sockets at once and logs \"time wait bucket table overflow\", dropping TCP's guard against stray old segments; raise it, never lower it",
			c.o.TWBuckets, count, host))
	}
}

func (c *calc) timeWaitWeb() Result {
	o := c.o
	r := Result{
		ID: IDTimeWaitWeb, Title: "TIME_WAIT sockets per web server (to MySQL)", Value: float64(c.twWeb), Unit: "sockets",
		Setting: &Setting{Kind: KindSysctl, Name: "net.ipv4.tcp_max_tw_buckets", Value: fmt.Sprint(twBuckets(c.twWeb, o.TWBuckets)),
			Current: fmt.Sprint(o.TWBuckets), Host: HostWeb, Where: "a file in /etc/sysctl.d, then sysctl --system"},
		Source: "the PHP + MySQL TIME_WAIT write-up; Linux ip-sysctl.txt (tcp_max_tw_buckets)",
	}
	switch {
	case o.Persistent:
		r.Formula = "0: persistent connections are not closed per request, so they leave no TIME_WAIT per request"
		r.Calculation = "0; " + c.twCalc(0)
		r.Notes = append(r.Notes, "the PHP + MySQL TIME_WAIT write-up found PHP's persistent connections unusable in practice with MySQL transactions: check that a connection's "+
			"state (open transaction, session variables, locks) cannot leak into the next request")
	case o.Closer == CloserDB:
		r.Formula = "0: the MySQL server closes first and holds the TIME_WAIT; the web server's side ends through LAST_ACK without it"
		r.Calculation = "0; " + c.twCalc(0)
	default:
		r.Formula = "rate × headroom / servers × TIME_WAIT: one TIME_WAIT per request, held by the web server, which closes first"
		r.Calculation = fmt.Sprintf("%s / %d × %s s = %s req/s × %s s = %d; %s",
			c.rate(), o.Servers, Num(c.twSec), Num(c.perServer), Num(c.twSec), c.twWeb, c.twCalc(c.twWeb))
		r.Notes = append(r.Notes, "the side that closes first holds the TIME_WAIT: non-persistent PHP ends every request with an active close toward MySQL, "+
			"so each web server keeps one per request (the PHP + MySQL TIME_WAIT write-up; right after 100000 requests at 1555 req/s it counted 43836 sockets to port 3306 on the web server)")
	}
	c.twWarning(&r, c.twWeb, "web server")
	r.Notes = append(r.Notes,
		"TIME_WAIT lasts 60 s, TCP_TIMEWAIT_LEN compiled into the Linux kernel; net.ipv4.tcp_fin_timeout sets FIN-WAIT-2, not TIME_WAIT, "+
			"so lowering it does not shorten TIME_WAIT (the smartphone game backend believed it did)",
		"measure: ss -tan state time-wait '( dport = :3306 )' | wc -l",
		"the default tcp_max_tw_buckets is half the TCP established hash, so it grows with RAM (4096 on the TIME_WAIT write-up's host): read yours with sysctl",
		"only connections to MySQL are counted: HTTP connections the web server closes (keep-alive timeout) and cache connections opened per request add their own")
	return r
}

func (c *calc) socketsWebResult() (formula, calculation string) {
	live := fmt.Sprint(c.live)
	if c.liveDerived {
		live = fmt.Sprintf("%d × %d", LiveSocketsPerWorker, c.o.Workers)
	}
	return "TIME_WAIT sockets + live sockets (unless given, 4 per worker: its client and its MySQL connection, doubled for client connections reopened when keep-alive fails)",
		fmt.Sprintf("%d + %s = %d", c.twWeb, live, c.sockets)
}

func (c *calc) socketsWeb() Result {
	f, calc := c.socketsWebResult()
	return Result{
		ID: IDSocketsWeb, Title: "Sockets per web server (TIME_WAIT + live)", Value: float64(c.sockets), Unit: "sockets",
		Formula: f, Calculation: calc,
		Notes: []string{
			"the TIME_WAIT write-up's 1024 live sockets are 4 × 256 httpd (Apache prefork's MaxClients); it counted 255 per server for max_connections",
			"a TIME_WAIT socket holds no file descriptor (the process closed it; the kernel keeps a small timewait record), so process file limits " +
				"need cover only live sockets: the TIME_WAIT write-up's LimitNOFILE=55024 for httpd is more than needed, though harmless",
		},
		Source: "the PHP + MySQL TIME_WAIT write-up (900 × 60 + 1024 = 55024)",
	}
}

func (c *calc) portRange() Result {
	o := c.o
	need := c.sockets
	cur := o.PortRange
	r := Result{
		ID: IDPortRange, Title: "Ephemeral ports per web server", Value: float64(need), Unit: "ports",
		Formula: "ports = sockets per web server (as the PHP + MySQL TIME_WAIT write-up counts them; only outgoing connections take a local port, so this over-counts); " +
			"range = 65536 - ports (made even) .. 65535, both ends included",
		Source: "the PHP + MySQL TIME_WAIT write-up; Linux ip-sysctl.txt (ip_local_port_range), net/ipv4/inet_hashtables.c",
	}
	nowCount := fmt.Sprintf("%d..%d = %d - %d + 1 = %d ports", cur.Low, cur.High, cur.High, cur.Low, cur.Count())
	set := cur
	switch {
	case cur.Usable() >= need:
		r.Calculation = fmt.Sprintf("%d needed; now %s: enough", need, nowCount)
	default:
		var ok bool
		set, ok = rangeFor(need)
		r.Calculation = fmt.Sprintf("%d needed; 65536 - %d = %d → %d..%d = %d - %d + 1 = %d ports (now %s)",
			need, set.Count(), set.Low, set.Low, set.High, set.High, set.Low, set.Count(), nowCount)
		if ok {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the current range gives %d ports, fewer than %d: once they are all in use or in TIME_WAIT, "+
				"connect() fails with \"Cannot assign requested address\" (EADDRNOTAVAIL)", cur.Usable(), need))
		} else {
			perServer := float64(MaxEphemeralPorts-c.live) / c.twSec
			w := fmt.Sprintf("%d ports are more than the %d above port 1024: no range is enough. ", need, MaxEphemeralPorts)
			if perServer > 0 && !o.Persistent && o.Closer == CloserWeb {
				w += fmt.Sprintf("Spread the rate over more web servers (%d keep each under %s req/s), ", ceil(c.planned/perServer), Num(perServer))
			}
			w += "use persistent connections, or add MySQL endpoints or source addresses (ports are counted per destination)"
			r.Warnings = append(r.Warnings, w)
		}
	}
	r.Setting = &Setting{Kind: KindSysctl, Name: "net.ipv4.ip_local_port_range", Value: set.String(), Current: cur.String(),
		Host: HostWeb, Where: "a file in /etc/sysctl.d, then sysctl --system; open the same range in a stateless packet filter"}
	r.Notes = append(r.Notes,
		"a range holds high - low + 1 ports: the TIME_WAIT write-up's 28231 for 32768..60999 is one short (28232), and its 65535 - 55024 = 10511 gives "+
			"10511..65535, 55025 ports, one more than needed. "+
			"connect() scans an even count (remaining &= ~1U in __inet_hash_connect), so an odd-sized range loses a port; plan starts the range on an even port, "+
			"ends of different parity as ip-sysctl.txt advises, and every port counts",
		"a stateless packet filter must let returning packets in to the same range (the PHP + MySQL TIME_WAIT write-up)",
		"a service listening inside the range (memcached 11211, Redis 6379, 8080) can find its port taken by an outgoing connection when it restarts: "+
			"list such ports in net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_tw_reuse=1 (the PHP + MySQL TIME_WAIT write-up sets it) lets connect() take over a TIME_WAIT port when TCP timestamps show it is safe; it masks a shortage "+
			"and does not remove it: with the range cut to 1000 ports the TIME_WAIT write-up's ab run still failed 71193 of 100000 requests. Size the range first. "+
			"Never use tcp_tw_recycle: it broke clients behind NAT and was removed in Linux 4.12",
		"local ports are counted per destination: connect() reuses a port toward another address or port, so these figures are for one MySQL endpoint")
	return r
}

func (c *calc) timeWaitDB() Result {
	o := c.o
	r := Result{
		ID: IDTimeWaitDB, Title: "TIME_WAIT sockets on the MySQL server", Value: float64(c.twDB), Unit: "sockets",
		Setting: &Setting{Kind: KindSysctl, Name: "net.ipv4.tcp_max_tw_buckets", Value: fmt.Sprint(twBuckets(c.twDB, o.TWBuckets)),
			Current: fmt.Sprint(o.TWBuckets), Host: HostMySQL, Where: "a file in /etc/sysctl.d, then sysctl --system"},
		Source: "the PHP + MySQL TIME_WAIT write-up; RFC 793 (the side that closes first enters TIME_WAIT)",
	}
	switch {
	case o.Persistent:
		r.Formula = "0: persistent connections are not closed per request"
		r.Calculation = "0; " + c.twCalc(0)
	case o.Closer == CloserWeb:
		r.Formula = "0: the web servers close first, so MySQL's side of each connection ends through LAST_ACK without TIME_WAIT"
		r.Calculation = "0; " + c.twCalc(0)
		r.Notes = append(r.Notes, "connections MySQL closes itself (wait_timeout, KILL, errors) leave their TIME_WAIT on the MySQL server")
	default:
		r.Formula = "rate × headroom × TIME_WAIT: the MySQL server closes first and holds one TIME_WAIT per request from every web server"
		r.Calculation = fmt.Sprintf("%s × %s s = %d; %s", c.rate(), Num(c.twSec), c.twDB, c.twCalc(c.twDB))
		r.Notes = append(r.Notes, "these take no ephemeral port on the MySQL server (its end is port 3306), but each costs kernel memory and a bucket; "+
			"a client that closes first moves them to the web servers, where they take ports instead")
	}
	c.twWarning(&r, c.twDB, "MySQL server")
	r.Notes = append(r.Notes, "one MySQL server receives every connection, as in the PHP + MySQL TIME_WAIT write-up")
	return r
}

func (c *calc) cacheConnections() Result {
	o := c.o
	n := c.capacity*o.CacheClientsPerWorker + memcachedReserve
	set := max(n, memcachedDefaultConns)
	r := Result{
		ID: IDCacheConnections, Title: "memcached connections (-c)", Value: float64(n), Unit: "connections",
		Formula: fmt.Sprintf("servers × workers × cache clients per worker + %d (memcached counts its reserved descriptors, 5 per thread, against -c; "+
			"the rest is spare for its listeners and monitoring)", memcachedReserve),
		Calculation: fmt.Sprintf("%d × %d × %d + %d = %d", o.Servers, o.Workers, o.CacheClientsPerWorker, memcachedReserve, n),
		Setting: &Setting{Kind: KindMemcachedFlag, Name: "-c", Value: fmt.Sprint(set),
			Host: HostMemcached, Where: "memcached's command line (/etc/memcached.conf or the unit's options), with LimitNOFILE above it"},
		Source: "the smartphone game backend's write-up (web servers × PHP-FPM processes); memcached.c (reserved_fds)",
	}
	if n < set {
		r.Calculation += fmt.Sprintf("; memcached's default -c %d already covers it", set)
	}
	r.Notes = append(r.Notes,
		"every worker connects to every memcached server of its pool, so each server needs this many",
		"Redis: maxclients (default 10000) needs the same count, and Redis wants maxclients + 32 open files",
		"a memcached on each web server reached over a unix socket needs only workers × clients per worker and leaves no TIME_WAIT (the smartphone game backend)",
		"cache connections opened per request over TCP leave TIME_WAITs as MySQL's do: keep them persistent "+
			"(the smartphone game backend's session timeouts stopped once its memcached connections were)")
	return r
}
