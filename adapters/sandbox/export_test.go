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

// DetectCgroups runs the start-up detection (and its sweep of groups left
// by crashed servers) and returns the scope found and the groups runs are
// made under.
func DetectCgroups() (scope string, parents []string) {
	c := detectCgroups()
	if c.v2 != "" {
		return c.scope, []string{c.v2}
	}
	return c.scope, c.v1
}

// OwnerTag is this process's tag in its runs' group names.
func OwnerTag() string { return ownerTag }

// CgroupPrefix names every run's group.
const CgroupPrefix = cgroupPrefix
