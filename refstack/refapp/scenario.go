package refapp

import _ "embed"

// Scenario is scenario.yaml, the bench scenario of the app, for programs
// that run it without the source tree (stacktune demo).
//
//go:embed scenario.yaml
var Scenario []byte
