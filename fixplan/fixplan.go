package fixplan

// Kinds of fix (Fix.Kind): stable codes.
const (
	KindNPlusOne    = "n_plus_one"
	KindHotFunction = "hot_function"
)

// Fix is what a finding left to the user needs to be fixed and proven.
type Fix struct {
	Kind     string `json:"kind"`
	Endpoint string `json:"endpoint"`
	// CallsPerRequest are the loop's calls per request of Endpoint (N+1).
	CallsPerRequest float64 `json:"calls_per_request,omitempty"`
	// RequestShare is the part of the endpoint's request time the loop's
	// statements (N+1) or the function's own CPU (hot function) take;
	// 0 when unknown.
	RequestShare float64 `json:"request_share"`
	// MsPerRequest is that time per request.
	MsPerRequest float64 `json:"ms_per_request"`
	// Function and CPUShare name a hot function and its own (self) share
	// of the endpoint's app CPU.
	Function string  `json:"function,omitempty"`
	CPUShare float64 `json:"cpu_share,omitempty"`
	// Rewrite is the one query that replaces the loop (N+1), checked.
	Rewrite *Rewrite `json:"rewrite,omitempty"`
	// Prove is the command that measures the change.
	Prove string `json:"prove"`
}

// Outcome is what running a rewrite beside its loop showed: a stable code.
type Outcome string

// Unchecked is why a rewrite was not checked: a stable code.
type Unchecked string

// Checks (Rewrite.Check).
const (
	CheckSameRows      Outcome = "same_rows"
	CheckDifferentRows Outcome = "different_rows"
	CheckUnchecked     Outcome = "unchecked"
)

// Codes are the checks, as docs/json.md lists them.
func (Outcome) Codes() []string {
	return []string{string(CheckSameRows), string(CheckDifferentRows), string(CheckUnchecked)}
}

// Codes are the reasons a rewrite is unchecked, as docs/json.md lists them.
func (Unchecked) Codes() []string {
	return []string{string(UncheckedNoStatements), string(UncheckedShape), string(UncheckedNoDatabase), string(UncheckedError), string(UncheckedBound)}
}

// Why a rewrite is not checked (Rewrite.Unchecked).
const (
	// UncheckedNoStatements: no request's statements of the loop with
	// their values (the statements carry no request tags, or the slow
	// log of the run is not at hand).
	UncheckedNoStatements Unchecked = "no_statements"
	// UncheckedShape: the statement is not a SELECT whose WHERE is an
	// AND/OR of column = literal comparisons, or its keys do not change.
	UncheckedShape Unchecked = "shape"
	// UncheckedNoDatabase: no database to run it on.
	UncheckedNoDatabase Unchecked = "no_database"
	// UncheckedError: running it failed (Error says how).
	UncheckedError Unchecked = "error"
	// UncheckedBound: the loop's rows are past MaxRows.
	UncheckedBound Unchecked = "bound"
)

// Rewrite is the one query that replaces a loop, and its check.
type Rewrite struct {
	// Query is the one query, with the sampled request's values.
	Query string `json:"query,omitempty"`
	// Keys are the columns whose values the loop changes.
	Keys []string `json:"keys,omitempty"`
	// Request names the sampled request (its tag key), Calls its calls
	// of the loop, Distinct the distinct key values among them.
	Request  string `json:"request,omitempty"`
	Calls    int    `json:"calls"`
	Distinct int    `json:"distinct"`
	// Check is a Check* code; Unchecked the reason code when unchecked,
	// Error the failure's text.
	Check     Outcome   `json:"check"`
	Unchecked Unchecked `json:"unchecked,omitempty"`
	Error     string    `json:"error,omitempty"`
	// LoopRows are the rows the loop's calls returned, Rows the one
	// query's; Differs is the first call whose rows differ (its index).
	LoopRows int64 `json:"loop_rows"`
	Rows     int64 `json:"rows"`
	Differs  int   `json:"differs,omitempty"`
	// Count says the loop counts rows: each call's count is checked
	// against the one query's rows that match it.
	Count bool `json:"count,omitempty"`
}
