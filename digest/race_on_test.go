//go:build race

package digest

// raceDetector is true when the race detector, which multiplies memory
// use, is on: memory bounds are not checked then.
const raceDetector = true
