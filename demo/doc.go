// Package demo runs stacktune's main job on the embedded default, with
// nothing pre-installed assumed beyond the Debian packages the setup script
// installs: it starts its own throwaway servers (package sandbox), drives the
// built-in workload (package workload) against them, and reports what
// stacktune finds. Everything it starts is stopped and removed before it
// returns, also on error or interrupt.
package demo
