package advise

// ruleFunc is a Rule made of an id, a layer and a check function; each
// rule file declares one.
type ruleFunc struct {
	id, layer string
	check     func(c *Context) []Finding
}

func (r ruleFunc) ID() string                 { return r.id }
func (r ruleFunc) Layer() string              { return r.layer }
func (r ruleFunc) Check(c *Context) []Finding { return r.check(c) }

// Rules is the registry: every rule, one file each, named by its id
// (rule mysql-tmp-table-size is mysql_tmp_table_size.go). Audit runs them
// all; the order does not matter, findings are sorted.
var Rules = []Rule{
	fixedSettings,
	// MySQL / MariaDB
	mysqlBufferPoolSize,
	mysqlBufferPoolHitRatio,
	mysqlBufferPoolInstances,
	mysqlMemoryBudget,
	mysqlPerSessionBuffers,
	mysqlRedoLogCapacity,
	mysqlLogBuffer,
	mysqlFlushLogAtTrxCommit,
	mysqlSyncBinlog,
	mysqlDoublewrite,
	mysqlFlushMethod,
	mysqlIOCapacity,
	mysqlMaxConnections,
	mysqlThreadCache,
	mysqlAbortedConnects,
	mysqlTableOpenCache,
	mysqlTableOpenCacheInstances,
	mysqlTableDefinitionCache,
	mysqlTmpTableSize,
	mysqlBinlogCache,
	mysqlOpenFilesLimit,
	mysqlQueryCache,
	mysqlPerformanceSchema,
	mysqlSlowLog,
	mysqlUnixSocket,
	mysqlBulkInsert,
	mysqlMaxDirtyPages,
	mysqlLRUScanDepth,
	mysqlAutoincLockMode,
	mysqlIsolation,
	mysqlBinlogFormat,
	mysqlNUMAInterleave,
	mysqlJemalloc,
	mysqlLogDevice,
	// Linux
	linuxPortRange,
	linuxTWBuckets,
	linuxTWReuse,
	linuxTWRecycle,
	linuxFinTimeout,
	linuxSomaxconn,
	linuxSwappiness,
	linuxMySQLdNofile,
	linuxNginxNofile,
	linuxOvercommit,
	linuxFileMax,
	linuxCPUByService,
	connectionChurn,
	linuxNoatime,
	linuxSocketBuffers,
	// nginx
	nginxWorkerProcesses,
	nginxWorkerConnections,
	nginxWorkerRlimitNofile,
	nginxSendfile,
	nginxOpenFileCache,
	nginxUpstreamKeepalive,
	nginxUnixUpstream,
	nginxAccessLogRequestTime,
	nginxGzip,
	nginxListenBacklog,
	nginxServerTokens,
	nginxHealthCheck,
	nginxKeepaliveRequests,
	nginxClientBodyTemp,
	nginxSendfileMaxChunk,
	nginxFastopen,
	nginxProxyOverhead,
	// memcached
	memcachedHitRatio,
	memcachedEvictions,
	memcachedConnections,
	memcachedUnixSocket,
	memcachedWriteOnRead,
	memcachedTTL,
	memcachedUDP,
	memcachedBacklog,
	memcachedCAS,
	// the application's workers
	appWorkers,
	phpfpmLimits,
	// the application
	appNPlusOne,
	// Redis
	redisEvictions,
	redisHitRatio,
	redisMaxclients,
	redisMaxmemory,
}

// mysqlReady reports whether the MySQL layer has its variables.
func (c *Context) mysqlReady() bool { return c.My != nil && len(c.My.Variables) > 0 }
