// Package boltstores holds the previous release's stores in its bbolt file
// (adapters/bolt): the agent memory and kv entries (MemoryStore), the
// working sets (WorkingSets), the task registry with its timers
// (TaskRegistry) and the vector index's persistence (read by
// DumpBoltVectors). The server no longer keeps state here: adapters/sqlite
// imports this data once, on the first start beside such a file, through
// the Dump functions (adapters/wire opens the file only for that). The
// stores stay whole, writable and under their contract tests so that
// tests can write the old format the import reads, and so benchmarks can
// compare the shared store against them.
package boltstores
