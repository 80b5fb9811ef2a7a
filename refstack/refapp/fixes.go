package refapp

// Fix is a code fix the app has behind a Config setting: it removes the
// N+1 pattern of one of the app's statements, so a tool that finds that
// statement's query class (by fingerprinting Query as it fingerprints the
// slow log) knows which setting fixes it.
type Fix struct {
	// Query is the SQL text the first version runs once per row: the
	// statement constant the app executes.
	Query string
	// Set switches the fix on in a Config.
	Set func(*Config)
	// Note says what the fix changes, for a report.
	Note string
}

// Fixes are the app's N+1 fixes behind a setting.
var Fixes = []Fix{{
	Query: qIsFriend,
	Set:   func(c *Config) { c.FriendSet = true },
	Note:  "app: friend_set on (the reference app's version of the code change: the home page loads the friend list once and checks each row against it)",
}}
