// Package measure is what the benchmarks under bench/ share to time a tool:
// run it as a child process and read its wall time, user+sys CPU, peak RSS
// and disk reads from its rusage, with the CPU the rest of the machine used
// meanwhile (/proc/stat); medians of runs; warming the page cache; finding
// and building the tools; the machine and versions for a report; and the
// number formats of the result tables. It also holds what the commands
// share around that: their main function (Main), the flags and per-tool
// result table of the log benchmarks (StacktuneFlags, ToolRow), the work
// directory, --tmpfs staging and the metadata beside a generated log.
package measure
