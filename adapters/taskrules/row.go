package taskrules

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// taskRow is a task as the embedded store keeps it, apart from the port's
// type so the file format changes only on purpose. Input and Result are
// JSON (the port says so; finish refuses a result that is not), kept as
// they are rather than base64-encoded.
type taskRow struct {
	ID        string          `json:"id"`
	Owner     string          `json:"owner"`
	Kind      string          `json:"kind"`
	Status    string          `json:"status"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Principal principalRow    `json:"principal"`
	Input     json.RawMessage `json:"input,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	DueAt     time.Time       `json:"due_at,omitzero"`
	Repeat    time.Duration   `json:"repeat,omitempty"`
	Next      string          `json:"next,omitempty"`
}

type principalRow struct {
	Subject       string   `json:"sub"`
	Issuer        string   `json:"iss,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	Authenticated bool     `json:"authenticated"`
	AllScopes     bool     `json:"all_scopes,omitempty"`
}

func toTaskRow(t ports.Task) taskRow {
	p := t.Principal
	return taskRow{ID: t.ID, Owner: t.Owner, Kind: t.Kind, Status: string(t.Status), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		Principal: principalRow{Subject: p.Subject, Issuer: p.Issuer, Scopes: p.Scopes, Authenticated: p.Authenticated, AllScopes: p.AllScopes},
		Input:     t.Input, Result: t.Result, Error: t.Error, DueAt: t.DueAt, Repeat: t.Repeat, Next: t.Next}
}

func (r taskRow) task() ports.Task {
	p := r.Principal
	return ports.Task{ID: r.ID, Owner: r.Owner, Kind: r.Kind, Status: ports.TaskStatus(r.Status), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Principal: ports.Principal{Subject: p.Subject, Issuer: p.Issuer, Scopes: slices.Clone(p.Scopes), Authenticated: p.Authenticated, AllScopes: p.AllScopes},
		Input:     slices.Clone(r.Input), Result: slices.Clone(r.Result), Error: r.Error, DueAt: r.DueAt, Repeat: r.Repeat, Next: r.Next}
}
