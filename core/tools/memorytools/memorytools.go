// Package memorytools is the memory family: caller-curated durable state.
// memory_store, memory_search, memory_list and memory_delete keep memories
// in namespaces; kv_set, kv_get and kv_delete keep an exact-key scratchpad
// with optional expiry. Ownership is structural: every record is keyed by
// the verified caller identity, never by an argument, so a foreign record
// reads as not found. Names pass strict patterns in the input schemas,
// every ARROWHEAD_MEMORY_* and ARROWHEAD_KV_* bound applies, every record
// carries its provenance, and every read is sanitized and framed as
// untrusted data: memories are not secret-scanned on write, remembering
// what the caller says is the point.
package memorytools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the memory family uses.
type Ports struct {
	// Memory stores memories and kv entries (the embedded store, or
	// PostgreSQL with ARROWHEAD_MEMORY_DSN).
	Memory ports.MemoryBackend
	// Embedder embeds each stored memory and each query for semantic
	// recall; nil (the default, and whenever the backend cannot rank
	// embeddings or the embedder is not a real one) is keyword recall.
	// adapters/wire decides, in one place.
	Embedder ports.Embedder `port:"optional"`
	// Authorizer decides the memory and kv kinds per namespace and key.
	Authorizer ports.Authorizer
	// Clock stamps records and decides expiry.
	Clock ports.Clock
}

// Config is what the memory family reads from the settings.
type Config struct {
	// Limits are the ARROWHEAD_MEMORY_* and ARROWHEAD_KV_* bounds the
	// backend enforces on each write.
	Limits ports.MemoryLimits
	// MaxContentBytes and MaxMetadataBytes cap one memory.
	MaxContentBytes  int `setting:"ARROWHEAD_MEMORY_MAX_CONTENT_BYTES"`
	MaxMetadataBytes int `setting:"ARROWHEAD_MEMORY_MAX_METADATA_BYTES"`
	// MaxK caps memory_search's k (the "$max_k" bound).
	MaxK int `setting:"ARROWHEAD_MEMORY_MAX_K"`
	// KVMaxValueBytes caps one kv value; KVMaxTTLSeconds its expiry (the
	// "$max_ttl" bound).
	KVMaxValueBytes int `setting:"ARROWHEAD_KV_MAX_VALUE_BYTES"`
	KVMaxTTLSeconds int `setting:"ARROWHEAD_KV_MAX_TTL_SECONDS"`
}

// Family is the memory family.
var Family = core.Family[Config, Ports, *memories]{
	ID: catalog.FamilyMemory,
	Configure: func(s *settings.Settings, c *Config) {
		c.Limits = ports.MemoryLimits{MaxEntriesPerNamespace: s.MemoryMaxEntriesPerNamespace, MaxNamespaces: s.MemoryMaxNamespaces,
			QuotaBytes: s.MemoryQuotaBytes, MaxKeys: s.KVMaxKeys}
	},
	Bounds: func(c Config) catalog.Bounds { return catalog.Bounds{"max_k": c.MaxK, "max_ttl": c.KVMaxTTLSeconds} },
	Serve: func(c Config, p Ports) *memories {
		return &memories{config: c, backend: p.Memory, embedder: p.Embedder, authorizer: p.Authorizer, clock: p.Clock}
	},
	Tools: []core.FamilyTool[*memories]{
		core.Tool(memoryStore, (*memories).store),
		core.Tool(memorySearch, (*memories).search),
		core.Tool(memoryList, (*memories).list),
		core.Tool(memoryDelete, (*memories).delete),
		core.Tool(kvSet, (*memories).kvSet),
		core.Tool(kvGet, (*memories).kvGet),
		core.Tool(kvDelete, (*memories).kvDelete),
	},
}

// The name patterns admit no separator, dot segment, space or non-ASCII
// character, so no traversal, homoglyph or bidi trick fits in a name. Ids
// are only ever the server's own: 128 random bits in lowercase hex.
type namespaceArg struct {
	Namespace string `json:"namespace" description:"Namespace: 1-64 letters, digits, '_' or '-'." pattern:"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$" maxLength:"64"`
}

type keyArg struct {
	Key string `json:"key" description:"Key: 1-128 letters, digits, '_', '.', ':' or '-'." pattern:"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$" maxLength:"128"`
}

// provenanceOut says which tool and caller wrote a record, and when.
type provenanceOut struct {
	Tool   string `json:"tool" description:"The tool that wrote the record."`
	Caller string `json:"caller" description:"The verified caller that wrote it."`
	At     string `json:"at" description:"When it was written (RFC 3339, UTC)."`
}

func provenance(p ports.Provenance) provenanceOut {
	return provenanceOut{Tool: p.Tool, Caller: content.SanitizeString(p.Caller), At: stamp(p.At)}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// memories is the family's handlers over the backend.
type memories struct {
	config     Config
	backend    ports.MemoryBackend
	embedder   ports.Embedder // nil: keyword recall
	authorizer ports.Authorizer
	clock      ports.Clock
}

// embed returns text's embedding for semantic recall, nil without an
// embedder.
func (m *memories) embed(ctx context.Context, text string) ([]float32, error) {
	if m.embedder == nil {
		return nil, nil
	}
	vecs, err := m.embedder.Embed(ctx, []string{text})
	switch {
	case err == nil && len(vecs) == 1:
		return vecs[0], nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil, err
	}
	return nil, catalog.Failed("The embedding provider could not embed the text.").WithCause(err)
}

// authorize checks the caller's grant on a namespace (kind memory) or key
// (kind kv) and returns the owner.
func (m *memories) authorize(ctx context.Context, call catalog.Call, action ports.Action, kind, id string) (string, error) {
	who, err := catalog.Owner(call.Principal)
	if err != nil {
		return "", err
	}
	if !m.authorizer.Authorize(ctx, call.Principal, action, ports.Resource{Kind: kind, ID: id}).Allowed {
		return "", catalog.Denied()
	}
	return who, nil
}

// refusal maps backend errors onto refusals that name no value.
func refusal(err error, what string) error {
	var le *ports.MemoryLimitError
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound(what)
	case errors.As(err, &le):
		return catalog.Invalid("A memory bound is reached (%s).", le.Var)
	}
	// Memory and kv writes are idempotent by content or key, so a write
	// of unknown outcome can simply be repeated.
	if r, ok := catalog.StoreRefusal(err, "The memory store",
		"Repeating it is safe: memory_store keeps identical content in a namespace once, kv_set sets the same value again, and a repeated delete answers not found if the first one was applied."); ok {
		return r
	}
	return catalog.Failed("The memory store could not complete the request.").WithCause(err)
}

func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func contentHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// frame sanitizes stored text and wraps it as untrusted data.
func frame(kind, identifier, text string) content.Framed {
	return content.Frame(content.SanitizeString(text), content.NewSource(kind, identifier, "text", []byte(text)))
}
