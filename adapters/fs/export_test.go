package fs

// WithoutBeneath makes r resolve every read component by component, as on
// a kernel without openat2, so the contract suite covers both read paths.
func WithoutBeneath(r *Repo) {
	if r.beneath != nil {
		r.beneath.close()
		r.beneath = nil
	}
}

// HasBeneath reports whether r reads through openat2.
func HasBeneath(r *Repo) bool { return r.beneath != nil }
