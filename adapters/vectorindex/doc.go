// Package vectorindex is the embedded vector index: the single-machine
// implementation of ports.VectorReader and ports.VectorWriter behind
// vector_search, vector_query, hybrid_query and doc_index when no Postgres
// is configured. It serves from memory (an exact scan of a flat vector
// table per tenant, a BM25 keyword index, reciprocal-rank fusion; why
// exact rather than HNSW is in vectors.go) and keeps nothing on disk
// itself: its collections live in a VectorPersistence, in production
// adapters/sqlite's VectorStore, which several processes share and the
// index follows (vectors_persist.go).
package vectorindex
