//go:build linux

package sandbox

// SetBinaries points the runners at other prlimit and bwrap binaries and
// returns a function that restores them.
func SetBinaries(prlimit, bwrap string) (restore func()) {
	oldP, oldB := prlimitPath, bwrapPath
	prlimitPath, bwrapPath = prlimit, bwrap
	return func() { prlimitPath, bwrapPath = oldP, oldB }
}

// SetCgroupRoot points cgroup detection at another directory (a missing
// one stands for a host without usable cgroups) and returns a function
// that restores it.
func SetCgroupRoot(dir string) (restore func()) {
	old := cgroupRoot
	cgroupRoot = dir
	return func() { cgroupRoot = old }
}
