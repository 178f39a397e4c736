package inproc

// Test-only views of the stores' internals, for the external tests.

// MaxKeys returns the cap on tracked buckets.
func (s *RateStore) MaxKeys() int { return s.maxKeys }

// Len returns how many buckets are tracked now (full ones not yet swept
// included).
func (s *RateStore) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.tat)
		sh.mu.Unlock()
	}
	return n
}
