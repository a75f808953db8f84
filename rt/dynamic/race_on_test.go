//go:build race

package dynamic_test

const raceEnabled = true
