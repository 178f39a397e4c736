package memorytools

import (
	"context"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type kvSetInput struct {
	keyArg
	Value      string `json:"value" description:"The value to keep."`
	TTLSeconds int    `json:"ttl_seconds,omitempty" description:"Seconds until the key expires; omitted keeps it until deleted." minimum:"1" maximum:"$max_ttl"`
}

type kvSetOutput struct {
	Key       string `json:"key" description:"The key set."`
	ExpiresAt string `json:"expires_at,omitempty" description:"When the key expires (RFC 3339), if it does."`
}

type kvKeyInput struct {
	keyArg
}

type kvGetOutput struct {
	content.Framed
	Key        string        `json:"key" description:"The key read."`
	ExpiresAt  string        `json:"expires_at,omitempty" description:"When the key expires (RFC 3339), if it does."`
	UpdatedAt  string        `json:"updated_at" description:"When it was last set (RFC 3339)."`
	Provenance provenanceOut `json:"provenance" description:"Who set it, and when."`
}

// kvSet defines kv_set; "$max_ttl" is the family's ARROWHEAD_KV_MAX_TTL_SECONDS bound.
var kvSet = catalog.Define[kvSetInput, kvSetOutput](catalog.ToolDef{
	Name:        "kv_set",
	Scope:       "memory:write",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_KV_SET_PER_MINUTE", Default: 60},
	Description: "Set a scratchpad key you own to a value, replacing it, optionally expiring after ttl_seconds. Example: kv_set(key=\"draft\", value=\"step 2 of 5\", ttl_seconds=3600)",
	Annotations: catalog.Annotations{Title: "Set key", Destructive: true, Idempotent: true},
})

// kvGet defines kv_get.
var kvGet = catalog.Define[kvKeyInput, kvGetOutput](catalog.ToolDef{
	Name:        "kv_get",
	Scope:       "memory:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_KV_GET_PER_MINUTE", Default: 120},
	Description: "Read a scratchpad key you own. A missing, expired or foreign key is reported as not found. Example: kv_get(key=\"draft\")",
	Annotations: catalog.Annotations{Title: "Get key", ReadOnly: true, Idempotent: true},
})

// kvDelete defines kv_delete.
var kvDelete = catalog.Define[kvKeyInput, deletedOutput](catalog.ToolDef{
	Name:        "kv_delete",
	Scope:       "memory:write",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_KV_DELETE_PER_MINUTE", Default: 60},
	Description: "Delete a scratchpad key you own. Example: kv_delete(key=\"draft\")",
	Annotations: catalog.Annotations{Title: "Delete key", Destructive: true, Idempotent: true},
})

func (m *memories) kvSet(ctx context.Context, call catalog.Call, in kvSetInput) (*catalog.Reply[kvSetOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionWrite, ports.KindKV, in.Key)
	if err != nil {
		return nil, err
	}
	if len(in.Value) > m.config.KVMaxValueBytes {
		return nil, catalog.Invalid("The value exceeds %d bytes (ARROWHEAD_KV_MAX_VALUE_BYTES).", m.config.KVMaxValueBytes)
	}
	now := m.clock.Now()
	e := ports.KVEntry{Key: in.Key, Value: in.Value, UpdatedAt: now, Provenance: ports.Provenance{Tool: "kv_set", Caller: who, At: now}}
	out := kvSetOutput{Key: in.Key}
	if in.TTLSeconds > 0 {
		e.ExpiresAt = now.Add(time.Duration(in.TTLSeconds) * time.Second)
		out.ExpiresAt = stamp(e.ExpiresAt)
	}
	if err := m.backend.KVSet(ctx, who, e, m.config.Limits); err != nil {
		return nil, refusal(err, "Key")
	}
	return catalog.Answer(out, "Set "+in.Key+"."), nil
}

func (m *memories) kvGet(ctx context.Context, call catalog.Call, in kvKeyInput) (*catalog.Reply[kvGetOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionRead, ports.KindKV, in.Key)
	if err != nil {
		return nil, err
	}
	e, err := m.backend.KVGet(ctx, who, in.Key, m.clock.Now())
	if err != nil {
		return nil, refusal(err, "Key")
	}
	out := kvGetOutput{Framed: frame("kv", in.Key, e.Value), Key: in.Key, UpdatedAt: stamp(e.UpdatedAt), Provenance: provenance(e.Provenance)}
	if !e.ExpiresAt.IsZero() {
		out.ExpiresAt = stamp(e.ExpiresAt)
	}
	return catalog.Answer(out, out.Framed.Text), nil
}

func (m *memories) kvDelete(ctx context.Context, call catalog.Call, in kvKeyInput) (*catalog.Reply[deletedOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionWrite, ports.KindKV, in.Key)
	if err != nil {
		return nil, err
	}
	if err := m.backend.KVDelete(ctx, who, in.Key); err != nil {
		return nil, refusal(err, "Key")
	}
	return catalog.Answer(deletedOutput{Deleted: true}, "Deleted "+in.Key+"."), nil
}
