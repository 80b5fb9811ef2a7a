package reqtrace

import "github.com/stacktune/stacktune/internal/skip"

// Reasons a request or statement is not counted: their codes are the keys
// of Report.Skipped. A report from a slow log's tags also carries the slow
// log parser's reasons (package slowlog).
var (
	ReasonClassesPastBound       = skip.Define("classes_past_request_bound", "classes past the bound of one request")
	ReasonCutStatements          = skip.Define("statements_of_cut_requests", "statements of requests cut by the end of the run")
	ReasonCutRequests            = skip.Define("requests_cut_by_end", "requests cut by the end of the run (not counted)")
	ReasonPreparedWithoutText    = skip.Define("prepared_without_text", "prepared statement executions without text (performance_schema)")
	ReasonHistoryWentRound       = skip.Define("history_went_round", "reads of performance_schema's history after it went round")
	ReasonFinishedEarly          = skip.Define("requests_finished_early", "requests finished early (more than the bound open at once)")
	ReasonInFlightRequests       = skip.Define("requests_in_flight_at_end", "requests in flight at the end of the run (not counted: the end may have cut them)")
	ReasonInFlightStatements     = skip.Define("statements_in_flight_at_end", "statements of requests in flight at the end of the run")
	ReasonAdminOrEmpty           = skip.Define("admin_or_empty_events", "administrator commands and empty events")
	ReasonRequestsPastTraceBound = skip.Define("requests_past_trace_bound", "requests past the bound of a trace run")
	ReasonStmtsPastTraceBound    = skip.Define("statements_past_trace_bound", "statements past the bound of a trace run")
	ReasonTextCut                = skip.Define("statement_text_cut", "statements whose text was cut (longer than the proxy keeps)")
	ReasonProxyOverCap           = skip.Define("proxy_over_cap", "connections the MySQL proxy refused past its cap of connections to the server (error 1040, Too many connections)")
	ReasonProxyRefused           = skip.Define("proxy_refused", "connections the MySQL proxy refused (TLS or compression asked for, the server unreachable, a handshake it cannot read)")
	ReasonProxyHandshakeTimeout  = skip.Define("proxy_handshake_timeout", "connections the MySQL proxy closed: not authenticated within its handshake timeout")
	ReasonProxyIdleTimeout       = skip.Define("proxy_idle_timeout", "connections the MySQL proxy closed: idle between commands past its idle timeout")
)
