// Package coretools is the core family: safe_fetch, calculate and
// read_file, the general-purpose utilities every profile serves.
package coretools

import (
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the core family's tools use.
type Ports struct {
	// Egress performs safe_fetch's SSRF-guarded outbound HTTP.
	Egress ports.Egress
	// Sandbox is read_file's jail.
	Sandbox ports.FileJail
}

// Config is what the core family reads from the settings.
type Config struct {
	// ExpressionMaxLength caps calculate's expression.
	ExpressionMaxLength int `setting:"ARROWHEAD_EXPRESSION_MAX_LENGTH"`
	// ReadFileMaxBytes caps the file read_file reads.
	ReadFileMaxBytes int64 `setting:"ARROWHEAD_READ_FILE_MAX_BYTES"`
	// FetchMaxResponseBytes, FetchTimeout and FetchMaxRedirects bound one
	// safe_fetch.
	FetchMaxResponseBytes int           `setting:"ARROWHEAD_FETCH_MAX_RESPONSE_BYTES"`
	FetchTimeout          time.Duration `setting:"ARROWHEAD_FETCH_TIMEOUT_SECONDS"`
	FetchMaxRedirects     int           `setting:"ARROWHEAD_FETCH_MAX_REDIRECTS"`
}

// Family is the core family.
var Family = core.Family[Config, Ports, *server]{
	ID:     catalog.FamilyCore,
	Bounds: func(c Config) catalog.Bounds { return catalog.Bounds{"expression": c.ExpressionMaxLength} },
	Serve:  func(c Config, p Ports) *server { return &server{config: c, egress: p.Egress, jail: p.Sandbox} },
	Tools: []core.FamilyTool[*server]{
		core.Tool(safeFetch, (*server).fetch),
		core.Tool(calculate, (*server).calculate),
		core.Tool(readFile, (*server).read),
	},
}

// server is what the core family's handlers share.
type server struct {
	config Config
	egress ports.Egress
	jail   ports.FileJail
}
