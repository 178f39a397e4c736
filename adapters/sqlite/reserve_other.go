//go:build !linux

package sqlite

import (
	"math"
	"os"
)

func allocate(f *os.File, size int64) error { return writeZeros(f, size) }

// freeBytes is unknown here: the reserve is simply tried, and writing it
// fails on a full disk.
func freeBytes(string) (int64, error) { return math.MaxInt64 / 4, nil }
