//go:build !linux

package main

// releaseStartupPages is a no-op where the Linux-specific release does not
// apply.
func releaseStartupPages() {}
