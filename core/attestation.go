package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The attested surface. A manifest names exactly what one caller can see
// (the same filtering tools/list, resources/list, resources/templates/list
// and prompts/list apply: App.ListTools and its siblings), so two callers
// with equal visible surfaces get byte-equal manifests, one digest and one
// signature.
const (
	// AttestationURI is the resource serving the caller's signed manifest.
	AttestationURI = "arrowhead://attestation"
	// AttestationKeyURI is the resource serving the public key as a JWK set.
	AttestationKeyURI = "arrowhead://attestation/key"
	// ManifestFormat names the manifest's shape; a change to it is a new
	// format, so a pinned client never mistakes one shape for another.
	ManifestFormat = "arrowhead.surface/v1"
	// AttestationFormat names the attestation resource's shape.
	AttestationFormat = "arrowhead.attestation/v1"
	// maxSurfaces bounds the cache of distinct surfaces. Surfaces differ
	// only by scope sets and kill rules, so a handful is usual; past the
	// bound the cache starts over (each surface then signs once more).
	maxSurfaces = 256
)

// Manifest is the canonical description of one caller's surface. Its JSON
// (see CanonicalManifest) is what the attestation signs.
type Manifest struct {
	Format            string             `json:"format"`
	Server            ManifestServer     `json:"server"`
	Tools             []ManifestTool     `json:"tools"`
	Resources         []ManifestResource `json:"resources"`
	ResourceTemplates []ManifestResource `json:"resourceTemplates"`
	Prompts           []ManifestPrompt   `json:"prompts"`
}

// ManifestServer is the server's version and build.
type ManifestServer struct {
	Version string        `json:"version"`
	Build   ManifestBuild `json:"build"`
}

// ManifestBuild is what runtime/debug.ReadBuildInfo reports of the binary.
type ManifestBuild struct {
	Module        string `json:"module"`
	ModuleVersion string `json:"moduleVersion"`
	GoVersion     string `json:"goVersion"`
	VCSRevision   string `json:"vcsRevision,omitempty"`
	VCSModified   string `json:"vcsModified,omitempty"`
}

// ManifestTool is one tool as its caller sees it, with its guard settings.
type ManifestTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  map[string]any  `json:"annotations"`
	Scope        string          `json:"scope"`
	PerMinute    int             `json:"perMinute"`
}

// ManifestResource is one resource (URI set) or template (URITemplate set).
type ManifestResource struct {
	Name        string `json:"name"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
	Scope       string `json:"scope"`
	PerMinute   int    `json:"perMinute"`
}

// ManifestPrompt is one prompt.
type ManifestPrompt struct {
	Name        string                   `json:"name"`
	Description string                   `json:"description"`
	Arguments   []ManifestPromptArgument `json:"arguments"`
	Scope       string                   `json:"scope"`
	PerMinute   int                      `json:"perMinute"`
}

// ManifestPromptArgument is one prompt argument.
type ManifestPromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	MaxLength   int    `json:"maxLength"`
}

// Attestation is the body of the AttestationURI resource: the caller's
// manifest signed as a compact JWS (alg EdDSA; its payload is the canonical
// manifest), the manifest's SHA-256 and the key id.
type Attestation struct {
	Format    string `json:"format"`
	Algorithm string `json:"algorithm"`
	Digest    string `json:"digest"`
	KeyID     string `json:"kid"`
	JWS       string `json:"jws"`
}

// ErrNoSigner is returned by Attest when the App was built without a
// Signer (Deps.Signer nil).
var ErrNoSigner = errors.New("attestation: no signing key")

// surface is one distinct visible surface: its manifest, digest and, once
// someone asked, its signature.
type surface struct {
	manifest []byte
	digest   string
	mu       sync.Mutex
	jws      string
}

// attestor keeps the surfaces seen so far, keyed by which components are
// visible. Specs do not change after New, so the visible set fixes the
// manifest; a kill rule or a scope set that changes what is visible is a
// different key.
type attestor struct {
	signer ports.Signer
	server ManifestServer
	mu     sync.RWMutex
	seen   map[string]*surface
}

func newAttestor(signer ports.Signer, version string) *attestor {
	return &attestor{signer: signer, server: serverInfo(version), seen: map[string]*surface{}}
}

// serverInfo reads the binary's build information once.
func serverInfo(version string) ManifestServer {
	s := ManifestServer{Version: version}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return s
	}
	s.Build = ManifestBuild{Module: info.Main.Path, ModuleVersion: info.Main.Version, GoVersion: info.GoVersion}
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Build.VCSRevision = kv.Value
		case "vcs.modified":
			s.Build.VCSModified = kv.Value
		}
	}
	if s.Version == "" {
		s.Version = info.Main.Version
	}
	return s
}

// visibleSurface is what p can list, by the listings' own filters.
type visibleSurface struct {
	tools     []ToolInfo
	resources []catalog.ResourceSpec
	templates []catalog.ResourceSpec
	prompts   []catalog.PromptSpec
}

func (a *App) visibleTo(p ports.Principal) visibleSurface {
	ctx := context.Background()
	return visibleSurface{
		tools:     a.ListTools(ctx, p),
		resources: a.ListResources(ctx, p),
		templates: a.ListResourceTemplates(ctx, p),
		prompts:   a.ListPrompts(ctx, p),
	}
}

// surfaceKey names the set of components p can see: one bit per
// registered tool, resource and prompt, set by the listings' own filter
// (Visible), in registration order. Specs do not change after New, so the
// set fixes the manifest. It is computed on every tools/list, so it builds
// no lists.
func (a *App) surfaceKey(p ports.Principal, buf []byte) []byte {
	n := len(a.toolOrder) + len(a.resources) + len(a.promptOrder)
	buf = append(buf[:0], make([]byte, (n+7)/8)...)
	i := 0
	mark := func(visible bool) {
		if visible {
			buf[i/8] |= 1 << (i % 8)
		}
		i++
	}
	for _, name := range a.toolOrder {
		mark(a.Visible(p, ports.ComponentTool, name))
	}
	for _, r := range a.resources {
		mark(a.Visible(p, ports.ComponentResource, r.Name))
	}
	for _, name := range a.promptOrder {
		mark(a.Visible(p, ports.ComponentPrompt, name))
	}
	return buf
}

// surfaceFor returns p's surface, building its manifest the first time that
// visible set is seen.
func (a *App) surfaceFor(p ports.Principal) *surface {
	var stack [64]byte
	k := a.surfaceKey(p, stack[:0])
	at := a.attestor
	at.mu.RLock()
	s := at.seen[string(k)] // no allocation: the compiler reads k in place
	at.mu.RUnlock()
	if s != nil {
		return s
	}
	manifest := CanonicalManifest(a.manifestOf(a.visibleTo(p)))
	sum := sha256.Sum256(manifest)
	s = &surface{manifest: manifest, digest: hex.EncodeToString(sum[:])}
	at.mu.Lock()
	defer at.mu.Unlock()
	if prev := at.seen[string(k)]; prev != nil {
		return prev
	}
	if len(at.seen) >= maxSurfaces {
		at.seen = map[string]*surface{}
	}
	at.seen[string(k)] = s
	return s
}

func (a *App) manifestOf(v visibleSurface) Manifest {
	m := Manifest{
		Format:            ManifestFormat,
		Server:            a.attestor.server,
		Tools:             []ManifestTool{},
		Resources:         []ManifestResource{},
		ResourceTemplates: []ManifestResource{},
		Prompts:           []ManifestPrompt{},
	}
	for _, t := range v.tools {
		surface := ToolSurface(t.Spec)
		in, err := t.Spec.Input().MarshalJSON()
		if err != nil {
			panic(fmt.Sprintf("manifest: %v", err)) // our own schemas always render
		}
		out, err := t.Spec.Output().MarshalJSON()
		if err != nil {
			panic(fmt.Sprintf("manifest: %v", err))
		}
		m.Tools = append(m.Tools, ManifestTool{
			Name:         t.Spec.Name(),
			Description:  t.Spec.Description(),
			InputSchema:  in,
			OutputSchema: out,
			Annotations:  surface["annotations"].(map[string]any),
			Scope:        t.Spec.Scope(),
			PerMinute:    t.PerMinute,
		})
	}
	readLimit := a.settings.Limit("ARROWHEAD_RESOURCE_READ_PER_MINUTE", 0)
	for _, r := range v.resources {
		m.Resources = append(m.Resources, ManifestResource{Name: r.Name, URI: r.URI, Description: r.Description,
			MimeType: r.MimeType, Scope: r.Scope, PerMinute: readLimit})
	}
	for _, r := range v.templates {
		m.ResourceTemplates = append(m.ResourceTemplates, ManifestResource{Name: r.Name, URITemplate: r.Template,
			Description: r.Description, MimeType: r.MimeType, Scope: r.Scope, PerMinute: readLimit})
	}
	promptLimit := a.settings.Limit("ARROWHEAD_PROMPT_GET_PER_MINUTE", 0)
	for _, pr := range v.prompts {
		args := []ManifestPromptArgument{}
		for _, arg := range pr.Args {
			args = append(args, ManifestPromptArgument{Name: arg.Name, Description: arg.Description,
				Required: arg.Required, MaxLength: arg.MaxLength})
		}
		m.Prompts = append(m.Prompts, ManifestPrompt{Name: pr.Name, Description: pr.Description,
			Arguments: args, Scope: pr.Scope, PerMinute: promptLimit})
	}
	sort.Slice(m.Resources, func(i, j int) bool { return m.Resources[i].URI < m.Resources[j].URI })
	sort.Slice(m.ResourceTemplates, func(i, j int) bool {
		return m.ResourceTemplates[i].URITemplate < m.ResourceTemplates[j].URITemplate
	})
	return m
}

// CanonicalManifest renders m canonically: object keys sorted at every
// depth (schemas included), no insignificant whitespace, no HTML escaping,
// numbers as written. Equal manifests give equal bytes.
func CanonicalManifest(m Manifest) []byte {
	raw, err := json.Marshal(m)
	if err == nil {
		raw, err = Canonicalize(raw)
	}
	if err != nil {
		// Every field is a string, number, bool or a schema we rendered.
		panic(fmt.Sprintf("manifest: %v", err))
	}
	return raw
}

// Canonicalize re-renders one JSON value canonically (see
// CanonicalManifest); it refuses trailing data.
func Canonicalize(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return canonicalJSON(v)
}

// ManifestDigest is the hex SHA-256 of p's canonical manifest: what rides
// in tools/list's _meta. It is computed once per distinct surface.
func (a *App) ManifestDigest(p ports.Principal) string { return a.surfaceFor(p).digest }

// Manifest returns p's canonical manifest and its hex SHA-256.
func (a *App) Manifest(p ports.Principal) ([]byte, string) {
	s := a.surfaceFor(p)
	return s.manifest, s.digest
}

// Attest returns p's signed manifest. The signature is made once per
// distinct surface and shared by every caller who sees that surface.
func (a *App) Attest(p ports.Principal) (Attestation, error) {
	if a.attestor.signer == nil {
		return Attestation{}, ErrNoSigner
	}
	s := a.surfaceFor(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jws == "" {
		jws, err := a.attestor.signer.Sign(s.manifest)
		if err != nil {
			return Attestation{}, fmt.Errorf("attestation: signing: %w", err)
		}
		s.jws = jws
	}
	return Attestation{Format: AttestationFormat, Algorithm: "sha256", Digest: s.digest,
		KeyID: a.attestor.signer.KeyID(), JWS: s.jws}, nil
}

// AttestationKeySet is the public key as a JWK set ({"keys":[jwk]}), or
// nil when the App has no Signer.
func (a *App) AttestationKeySet() []byte {
	if a.attestor.signer == nil {
		return nil
	}
	return []byte(`{"keys":[` + string(a.attestor.signer.PublicJWK()) + `]}`)
}

// attestationResources serve the caller's signed manifest and the public
// key. Like every resource they are read through the guard chain; they need
// no scope beyond being an authenticated caller, because a manifest only
// describes what its reader can already list.
func (a *App) attestationResources() []catalog.ResourceSpec {
	return []catalog.ResourceSpec{
		{
			Name:        "attestation",
			URI:         AttestationURI,
			Description: "The tool surface you can see (tools, resources, templates, prompts with descriptions, schemas, annotations, scopes and per-minute ceilings, plus the server build), as a canonical JSON manifest signed with the server's Ed25519 key (compact JWS), with its SHA-256 digest; pin the digest to detect a changed surface.",
			MimeType:    "application/json",
			Handler: func(_ context.Context, call catalog.ResourceCall) ([]catalog.ResourceContent, error) {
				att, err := a.Attest(call.Principal)
				if err != nil {
					return nil, err
				}
				body, err := json.Marshal(att)
				if err != nil {
					return nil, err
				}
				return []catalog.ResourceContent{{URI: AttestationURI, MimeType: "application/json", Text: string(body)}}, nil
			},
		},
		{
			Name:        "attestation-key",
			URI:         AttestationKeyURI,
			Description: "The server's public attestation key as a JWK set: verify the attestation resource's signature with it.",
			MimeType:    "application/jwk-set+json",
			Handler: func(context.Context, catalog.ResourceCall) ([]catalog.ResourceContent, error) {
				return []catalog.ResourceContent{{URI: AttestationKeyURI, MimeType: "application/jwk-set+json",
					Text: string(a.AttestationKeySet())}}, nil
			},
		},
	}
}

// ManifestOf decodes a manifest (the JWS payload) for a reader such as the
// CLI's diff.
func ManifestOf(raw []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, errors.New("not an arrowhead surface manifest")
	}
	if m.Format != ManifestFormat {
		return Manifest{}, errors.New("not a " + ManifestFormat + " manifest")
	}
	return m, nil
}
