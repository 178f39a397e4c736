// Package inproc holds the stores kept in this process's memory only: the
// rate-limit buckets (RateStore, ports.RateStore) and the exfiltration
// guard's flow marks (the same RateStore, ports.FlowStore). They need no
// external service and are neither durable nor shared: a restart forgets
// them, and each replica counts on its own. adapters/wire uses them when
// no Redis is configured, and as the Redis stores' per-replica fallback
// while Redis does not answer.
package inproc
