// Package settings is the single definition of every ARROWHEAD_* variable:
// its name, its default (the seed's), how it parses and what makes it valid.
// Adapters supply the raw values (environment, .env, config file); this
// package turns them into a typed, validated Settings value or a list of
// problems, each naming its variable.
package settings

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Settings is the effective configuration. Fields mirror the variables; the
// per-minute ceilings live in Limits keyed by variable name.
type Settings struct {
	Profile           string
	Transport         string
	Host              string
	Port              int
	StatelessHTTP     bool
	AllowedHosts      []string
	AllowedOrigins    []string
	AuthEnabled       bool
	AllowInsecureHTTP bool
	ServerPublicURL   string

	OAuthProvider      string
	OAuthIssuer        string
	OAuthAudience      string
	OAuthJWKSURI       string
	OAuthPublicKey     string
	OAuthAuthkitDomain string
	OAuthScopeClaim    string
	OAuthRequireAtJWT  bool
	OAuthDPoP          string
	OAuthDPoPWindowS   int

	AuthzPolicy string

	JailRoot         string
	ReadFileMaxBytes int

	DocsRoot             string
	DocMaxBytes          int
	DocAllowedExtensions []string
	ContentMaxBytes      int
	JSONMaxDepth         int
	JSONMaxElements      int

	SearchQueryMaxLength  int
	SearchRegexEnabled    bool
	SearchRegexTimeoutMS  int
	SearchMaxFiles        int
	SearchMaxResults      int
	SearchMaxTotalBytes   int
	SearchSnippetMaxChars int

	ScanMaxFiles        int
	ScanPerFileMaxBytes int
	ScanTimeoutSeconds  float64
	ScanMaxFindings     int

	// RedactReads is ARROWHEAD_REDACT_READS: whether tool results pass the
	// secret scanner (model requests always do).
	RedactReads bool

	DocWriteMaxBytes         int
	DocWriteQuotaBytes       int
	RequireWriteConfirmation bool

	FetchTimeoutSeconds   float64
	FetchMaxResponseBytes int
	FetchMaxRedirects     int
	EgressAllowedHosts    []string
	EgressAllowedPorts    []int
	// EgressGuard is the exfiltration guard's mode: refuse, confirm or off.
	EgressGuard              string
	EgressGuardWindowSeconds float64

	ExpressionMaxLength int

	SQLDSN             string
	SQLDialect         string
	SQLQueryMaxLength  int
	SQLMaxRows         int
	SQLMaxBytes        int
	SQLMaxColumns      int
	SQLTimeoutSeconds  float64
	SQLTempFileLimitMB int
	SQLWorkMemMB       int

	PgvectorCollections       []string
	PgvectorTenantColumn      string
	PgvectorIDColumn          string
	PgvectorContentColumn     string
	PgvectorEmbeddingColumn   string
	PgvectorSourceColumn      string
	PgvectorChunkIndexColumn  string
	PgvectorContentHashColumn string
	PgvectorTsvectorColumn    string
	PgvectorMaxK              int
	PgvectorMaxDimensions     int

	EmbeddingProvider         string
	EmbeddingDimensions       int
	EmbeddingEndpoint         string
	EmbeddingModel            string
	EmbeddingAPIKey           string
	EmbeddingBatchSize        int
	EmbeddingTimeoutSeconds   float64
	EmbeddingMaxTexts         int
	EmbeddingMaxResponseBytes int

	VectorWriteDSN            string
	VectorIndexMaxFiles       int
	VectorIndexMaxChunks      int
	VectorIndexChunkMaxChars  int
	VectorIndexChunkOverlap   int
	VectorIndexTimeoutSeconds float64
	CodeChunkMaxChars         int
	IndexReuseUnchanged       bool

	// DataDir holds the embedded vector index (extension variable).
	DataDir string
	// DataMinFreeBytes is the free space under which the embedded store
	// reports degraded (extension variable).
	DataMinFreeBytes int
	// AttestationKey is the attestation signing key, inline PEM or a path
	// (extension variable).
	AttestationKey string
	// AuditCheckpointLines and AuditCheckpointSeconds space the audit
	// log's signed checkpoints (extension variables).
	AuditCheckpointLines   int
	AuditCheckpointSeconds float64

	HybridRRFK                int
	HybridCandidateMultiplier int
	FTSLanguage               string

	RepoRoot                string
	RepoMaxFileBytes        int
	RepoAllowedExtensions   []string
	RepoAllowedNames        []string
	RepoExcludedDirs        []string
	RepoSearchMaxFiles      int
	RepoSearchMaxTotalBytes int
	RepoSearchTimeoutMS     int
	SymbolMapMaxFiles       int
	SymbolMapMaxSymbols     int
	DependencyGraphMaxFiles int

	LLMProvider       string
	LLMEndpoint       string
	LLMModel          string
	LLMAPIKey         string
	LLMMaxTokens      int
	LLMTimeoutSeconds float64
	LLMMaxPromptChars int
	LLMInternalHosts  []string
	DiffMaxBytes      int

	ExecEnabled         bool
	ExecRunner          string
	ExecContainerImage  string
	ExecWorkdir         string
	ExecCPUSeconds      int
	ExecWallSeconds     float64
	ExecTestWallSeconds float64
	ExecMemoryBytes     int
	// ExecTestMemoryBytes and ExecTestCPUSeconds bound each process of a
	// run_tests run: compilers and test binaries need more than a snippet.
	ExecTestMemoryBytes int
	ExecTestCPUSeconds  int
	ExecMaxOutputBytes  int
	ExecMaxCodeBytes    int
	ExecMaxCopyBytes    int
	ExecCopyMaxFiles    int
	ExecTestCommand     string

	WorkingsetMaxSets  int
	WorkingsetMaxItems int
	PackMaxTokens      int

	MemoryRoot                   string
	MemoryDSN                    string
	MemoryMaxContentBytes        int
	MemoryMaxMetadataBytes       int
	MemoryMaxEntriesPerNamespace int
	MemoryMaxNamespaces          int
	MemoryQuotaBytes             int
	MemoryMaxK                   int
	KVMaxKeys                    int
	KVMaxValueBytes              int
	KVMaxTTLSeconds              int
	// StateDSN is the PostgreSQL database replicas share their working
	// sets, tasks and timers through; empty keeps them in the embedded
	// store (extension variable).
	StateDSN string

	TaskScheduleMaxDelaySeconds  float64
	TaskScheduleMinRepeatSeconds float64
	TaskScheduleMaxPerOwner      int
	TaskPayloadMaxBytes          int

	NotifyAllowlist        []string
	NotifyTimeoutSeconds   float64
	NotifyMaxPayloadBytes  int
	NotifyMaxResponseBytes int
	// NotifySigningSecret is the whsec_ key that signs deliveries
	// (extension variable).
	NotifySigningSecret string

	RateLimitEnabled bool
	// Limits holds the ARROWHEAD_*_PER_MINUTE ceilings by variable name:
	// every one that is not a tool's own, and a tool's own only when it is
	// set (unset, the tool's definition gives the default; see Limit).
	Limits   map[string]int
	RedisURL string
	// RateLimitFallbackShare is the percent of each ceiling a replica
	// enforces while Redis is unreachable; 0 derives it from the replicas
	// seen alive.
	RateLimitFallbackShare int

	DisabledTools []string
	// CanaryTokens are planted honeytoken values; CanaryFile names a file
	// listing more, one a line; CanaryTripSeconds is how long a trip takes
	// egress away from the caller.
	CanaryTokens      []string
	CanaryFile        string
	CanaryTripSeconds int

	ToolListTTLMS     int
	ResourceReadTTLMS int

	OTelExporterOTLPEndpoint string
	OTelExporterOTLPHeaders  string
	OTelServiceName          string
	// MetricsAddr is where the Prometheus scrape endpoint listens, apart
	// from the public listener; empty turns it off (extension variable).
	MetricsAddr string
}

// Extensions are the variables this server adds to the seed's reference.
// Each is documented in README's configuration notes.
var Extensions = []string{
	"ARROWHEAD_DATA_DIR", "ARROWHEAD_OAUTH_SCOPE_CLAIM", "ARROWHEAD_OAUTH_REQUIRE_AT_JWT", "ARROWHEAD_METRICS_ADDR", "ARROWHEAD_NOTIFY_SIGNING_SECRET", "ARROWHEAD_STATE_DSN",
	"ARROWHEAD_REPO_ALLOWED_NAMES", "ARROWHEAD_REPO_SEARCH_MAX_TOTAL_BYTES", "ARROWHEAD_REPO_SEARCH_TIMEOUT_MS",
	"ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB", "ARROWHEAD_SQL_WORK_MEM_MB", "ARROWHEAD_RATE_LIMIT_FALLBACK_SHARE",
	"ARROWHEAD_EXEC_TEST_MEMORY_BYTES", "ARROWHEAD_EXEC_TEST_CPU_SECONDS", "ARROWHEAD_DATA_MIN_FREE_BYTES",
	"ARROWHEAD_REDACT_READS", "ARROWHEAD_EGRESS_GUARD", "ARROWHEAD_EGRESS_GUARD_WINDOW_SECONDS",
	"ARROWHEAD_CANARY_TOKENS", "ARROWHEAD_CANARY_FILE", "ARROWHEAD_CANARY_TRIP_SECONDS",
	"ARROWHEAD_OAUTH_DPOP", "ARROWHEAD_OAUTH_DPOP_WINDOW",
	"ARROWHEAD_ATTESTATION_KEY", "ARROWHEAD_AUDIT_CHECKPOINT_LINES", "ARROWHEAD_AUDIT_CHECKPOINT_SECONDS",
}

// SecretValues are the effective values of every variable marked secret
// that is set (API keys, signing secrets, DSNs, header lists): what the
// secret scanner looks for whatever their shape, so the server never hands
// its own credentials to a caller or a model.
func (s *Settings) SecretValues() []string {
	var out []string
	for _, v := range s.vars() {
		if !v.Secret {
			continue
		}
		val := v.render()
		if val == "" {
			continue
		}
		out = append(out, val)
		if v.Name == "ARROWHEAD_OTEL_EXPORTER_OTLP_HEADERS" {
			// key=value pairs: each value is a credential of its own.
			for _, pair := range strings.Split(val, ",") {
				if _, hv, ok := strings.Cut(pair, "="); ok {
					out = append(out, strings.TrimSpace(hv))
				}
			}
		}
	}
	return out
}

// DefaultToolLimitVar is the fallback ceiling for a tool without its own.
const DefaultToolLimitVar = "ARROWHEAD_DEFAULT_TOOL_PER_MINUTE"

// Limit returns the per-minute ceiling configured under varName, falling back
// to fallback (a tool's declared default) and then to the default tool limit.
func (s *Settings) Limit(varName string, fallback int) int {
	if v, ok := s.Limits[varName]; ok {
		return v
	}
	if fallback > 0 {
		return fallback
	}
	return s.Limits[DefaultToolLimitVar]
}

// Seconds converts a float seconds setting to a duration.
func Seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// Problem is one invalid setting.
type Problem struct {
	Var    string
	Reason string
}

func (p Problem) String() string { return p.Var + ": " + p.Reason }

// Error lists every problem found while loading settings. Its Error text is
// the first problem on one line, naming the variable, as startup prints it.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return "invalid configuration"
	}
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0].String()
	}
	return fmt.Sprintf("invalid configuration: %s (and %d more)", e.Problems[0], len(e.Problems)-1)
}

// Lookup returns the raw value of a variable and whether it was set.
type Lookup func(name string) (string, bool)

// Defaults returns the settings every variable takes when nothing is set.
func Defaults() *Settings {
	s, err := Load(func(string) (string, bool) { return "", false })
	if err != nil {
		// The defaults are ours; a failure here is a programming error that
		// the unit tests catch.
		panic(err)
	}
	return s
}

// Load parses and validates every variable through lookup.
func Load(lookup Lookup) (*Settings, error) {
	s := &Settings{Limits: map[string]int{}}
	var problems []Problem
	for _, v := range s.vars() {
		raw, ok := lookup(v.Name)
		if !ok && v.defaultElsewhere {
			continue
		}
		if !ok {
			raw = v.Default
		}
		raw = strings.TrimSpace(raw)
		if err := v.parse(raw); err != nil {
			problems = append(problems, Problem{Var: v.Name, Reason: err.Error()})
		}
	}
	if len(problems) == 0 {
		problems = append(problems, s.crossCheck()...)
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return s, nil
}

// Entry is one variable's effective value as check-config prints it.
type Entry struct {
	Name    string
	Value   string
	Default string
	Secret  bool
}

// Redacted is the stand-in printed for a secret that is set.
const Redacted = "(redacted)"

// Effective lists every variable with its effective value, secrets redacted.
// It renders from the parsed settings, so it shows what the server uses.
func (s *Settings) Effective() []Entry {
	vars := s.vars()
	out := make([]Entry, 0, len(vars))
	for _, v := range vars {
		val := v.render()
		if v.Secret && val != "" {
			val = Redacted
		}
		out = append(out, Entry{Name: v.Name, Value: val, Default: v.Default, Secret: v.Secret})
	}
	return out
}

// Names returns every variable name, sorted.
func Names() []string {
	var s Settings
	s.Limits = map[string]int{}
	var names []string
	for _, v := range s.vars() {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	return names
}

// DefaultOf returns the default of a variable and whether it exists.
func DefaultOf(name string) (string, bool) {
	var s Settings
	s.Limits = map[string]int{}
	i := slices.IndexFunc(s.vars(), func(v *Var) bool { return v.Name == name })
	if i < 0 {
		return "", false
	}
	return s.vars()[i].Default, true
}
