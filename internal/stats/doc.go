// Package stats holds the summary statistics several packages compute the
// same way, so that they agree: Median (the mean of the two middle values
// for an even count) is what abtest's ratio of medians, history's run
// summaries, knobsearch's comparisons, fleet's outlier rates and the
// benchmarks' tables all mean by a median. It is a leaf helper: it imports
// no other stacktune package.
package stats
