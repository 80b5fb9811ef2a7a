// Package layers holds the test that keeps stacktune's imports running one
// way. It has no code: its test lists every package's dependencies with
// `go list -deps` and fails on an edge that goes up a layer.
//
// The layers, bottom to top:
//
//  0. leaf helpers, internal/*: bytes, files and numbers (atomicfile, bytesconv,
//     dirsnap, fastcgi, golden, browsertest, stats) and the skip codes'
//     registry (skip); they import no other stacktune package but each
//     other;
//  1. the library: every other package under the module root, sandbox
//     (throwaway real servers, which production code such as indexadv may
//     start) included;
//  2. the reference stack, refstack/*: the demo, the reference app and
//     its workload, which use the library and which no library package
//     may use;
//  3. the programs, cmd/* and bench/*.
package layers
