// Package taskrules holds the pure parts of the embedded task registries,
// shared by the one the server runs (adapters/sqlite) and the previous
// release's (adapters/bolt/boltstores, kept for its one-time import and
// as a test and benchmark baseline): what a new task or timer looks like,
// how a task ends, how a timer fires and repeats, the per-owner bounds,
// which finished tasks expire or are evicted, and the JSON a task is kept
// as. Each registry only decides where the rows live and how a change is
// made atomic. It is its own package because adapters/sqlite imports
// boltstores (to import its data), so neither can hold the rules for
// the other.
package taskrules
