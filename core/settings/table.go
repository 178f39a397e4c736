package settings

import "slices"

// vars is the table of every variable, section by section in the order of
// the seed's configuration reference. Names and defaults are the seed's;
// this is the only place either is written, but for each tool's own
// per-minute ceiling, whose default its definition states (the rows are
// generated from the definitions into ceilings.go). Every variable says in
// one sentence what it does (the reference documentation and .env.example
// are generated from this table; a test refuses a variable without a
// meaning).
func (s *Settings) vars() []*Var { return s.varsWith(toolCeilings) }

// varsWith is vars with the tools' ceilings rows taken from ceilings.
func (s *Settings) varsWith(ceilings []ToolCeiling) []*Var {
	return slices.Concat(
		in(Section{Title: "Profile", About: "Which tool families this deployment serves. A tool outside the profile is never registered: it costs no context and a call to it is unknown."},
			text("ARROWHEAD_PROFILE", "full", &s.Profile, oneOf("core", "docs", "coding", "full")).
				means("The set of tool families served: core, docs, coding or full (every family; gated families still need their gate)."),
		),
		in(Section{Title: "Transport", About: "How clients reach the server: over standard input and output, or the streamable HTTP endpoint."},
			text("ARROWHEAD_TRANSPORT", "stdio", &s.Transport, oneOf("stdio", "http", "streamable-http")).
				means("stdio serves one client over standard input and output; http (or streamable-http) serves the streamable HTTP endpoint."),
			text("ARROWHEAD_HOST", "127.0.0.1", &s.Host, nonEmpty, hostname).
				means("The address the HTTP listener binds."),
			integer("ARROWHEAD_PORT", "8000", &s.Port, between(0, 65535)).
				means("The TCP port the HTTP listener binds."),
			boolean("ARROWHEAD_STATELESS_HTTP", "true", &s.StatelessHTTP).
				means("Serve HTTP without protocol sessions, so any replica can answer any request; the 2026-07-28 leg is sessionless either way."),
			list("ARROWHEAD_ALLOWED_HOSTS", "", &s.AllowedHosts, hostOrHostPort).
				means("Host header values the HTTP endpoint accepts (DNS-rebinding defence); empty accepts any Host but a non-loopback name on a loopback listener. Set it to the public host name behind a proxy."),
			list("ARROWHEAD_ALLOWED_ORIGINS", "", &s.AllowedOrigins, origin).
				means("Origin header values the HTTP endpoint accepts when a request carries one; empty checks no Origin."),
		),
		in(Section{Title: "Auth (OAuth 2.1 resource server)", About: "Bearer-token verification for the HTTP endpoint. Leave it off only for local stdio use; with it on, the public URL, the issuer, the audience and one key source are required."},
			boolean("ARROWHEAD_AUTH_ENABLED", "false", &s.AuthEnabled).
				means("Require a verified OAuth 2.1 bearer token (signature, issuer, audience, expiry) on every HTTP request."),
			boolean("ARROWHEAD_ALLOW_INSECURE_HTTP", "false", &s.AllowInsecureHTTP).
				means("Let the server start over HTTP with auth off, which exposes every tool unchecked: for a trusted-network test only."),
			text("ARROWHEAD_SERVER_PUBLIC_URL", "", &s.ServerPublicURL, optional(httpURL)).
				means("The server's public base URL: the canonical resource URI that tokens must be minted for and that the RFC 9728 metadata names. Required with auth on."),
			text("ARROWHEAD_OAUTH_PROVIDER", "jwt", &s.OAuthProvider, oneOf("jwt", "workos")).
				means("jwt verifies tokens from any OAuth 2.1 issuer you configure; workos derives the issuer and JWKS URI from the WorkOS AuthKit domain."),
			text("ARROWHEAD_OAUTH_ISSUER", "", &s.OAuthIssuer).
				means("The issuer (iss) tokens must carry, for the jwt provider."),
			text("ARROWHEAD_OAUTH_AUDIENCE", "", &s.OAuthAudience).
				means("The audience (aud) tokens must carry: the canonical resource URI or its /mcp endpoint. The workos provider defaults it to the public URL."),
			text("ARROWHEAD_OAUTH_JWKS_URI", "", &s.OAuthJWKSURI, optional(httpURLWithQuery)).
				means("The issuer's JSON Web Key Set URL, the preferred key source for the jwt provider (https, or http on loopback only)."),
			text("ARROWHEAD_OAUTH_PUBLIC_KEY", "", &s.OAuthPublicKey).
				means("A PEM public key that verifies tokens instead of a JWKS URI; set exactly one of the two."),
			text("ARROWHEAD_OAUTH_AUTHKIT_DOMAIN", "", &s.OAuthAuthkitDomain, optional(authkitDomain)).
				means("The WorkOS AuthKit domain, required by the workos provider."),
			// Extensions: the one claim scopes are read from, and whether the
			// RFC 9068 typ at+jwt is required.
			text("ARROWHEAD_OAUTH_SCOPE_CLAIM", "scope", &s.OAuthScopeClaim, oneOf("scope", "scp")).
				means("The one token claim scopes are read from: scope (RFC 9068) or scp; the other claim is ignored, so two claims never add up."),
			boolean("ARROWHEAD_OAUTH_REQUIRE_AT_JWT", "false", &s.OAuthRequireAtJWT).
				means("Accept only tokens whose typ header is at+jwt (RFC 9068); off, typ may also be JWT or absent."),
			// DPoP (RFC 9449): proof-of-possession tokens.
			text("ARROWHEAD_OAUTH_DPOP", "off", &s.OAuthDPoP, oneOf("off", "allowed", "required")).
				means("DPoP proof-of-possession (RFC 9449): off treats every token as a bearer token (a DPoP-bound one too, as a server without DPoP does); allowed also accepts DPoP-bound tokens with a proof and refuses a bound token presented as Bearer; required accepts only DPoP-bound tokens with a proof. Proof ids are single-use across replicas through ARROWHEAD_REDIS_URL when set."),
			integer("ARROWHEAD_OAUTH_DPOP_WINDOW", "60", &s.OAuthDPoPWindowS, between(1, 300)).
				means("How many seconds a DPoP proof's iat may lie from the server's clock, either way; a proof id is remembered for as long as its proof could pass."),
		),
		in(Section{Title: "Per-resource authorization", About: "The default-deny grant list checked on every call after the scope check."},
			text("ARROWHEAD_AUTHZ_POLICY", "", &s.AuthzPolicy, optional(policyJSON)).
				means("An inline JSON grant list; empty uses the embedded default policy (read, search and scan anywhere, write under the caller's own prefix). Ignored with auth off."),
		),
		in(Section{Title: "read_file jail", About: "The sandbox directory read_file serves, and nothing outside it."},
			text("ARROWHEAD_JAIL_ROOT", "sandbox", &s.JailRoot, nonEmpty).
				means("The only directory read_file may read from; the default one is created, with a welcome sample, when missing."),
			integer("ARROWHEAD_READ_FILE_MAX_BYTES", "1000000", &s.ReadFileMaxBytes).
				means("The largest file read_file returns, in bytes."),
		),
		in(Section{Title: "Document corpus", About: "The jailed corpus the doc_* tools work on, apart from the read_file sandbox, and the caps on the content they return."},
			text("ARROWHEAD_DOCS_ROOT", "documents", &s.DocsRoot, nonEmpty).
				means("The directory holding the document corpus."),
			integer("ARROWHEAD_DOC_MAX_BYTES", "1000000", &s.DocMaxBytes).
				means("The largest document read or indexed, in bytes."),
			list("ARROWHEAD_DOC_ALLOWED_EXTENSIONS", ".json,.md,.txt", &s.DocAllowedExtensions, oneOf(".json", ".md", ".txt", ".markdown")).
				means("The file extensions that count as documents; other files are invisible to the document tools."),
			integer("ARROWHEAD_CONTENT_MAX_BYTES", "1000000", &s.ContentMaxBytes).
				means("The most sanitized document content one result returns, in bytes; longer content is truncated."),
			integer("ARROWHEAD_JSON_MAX_DEPTH", "64", &s.JSONMaxDepth, between(1, 1000)).
				means("The deepest nesting a JSON document may have."),
			integer("ARROWHEAD_JSON_MAX_ELEMENTS", "100000", &s.JSONMaxElements).
				means("The most values a JSON document may hold."),
		),
		in(Section{Title: "doc_search", About: "Bounds on corpus search. Regular expressions are off by default; when on, they run on an engine without backtracking under a hard timeout."},
			integer("ARROWHEAD_SEARCH_QUERY_MAX_LENGTH", "200", &s.SearchQueryMaxLength, between(1, 10000)).
				means("The longest search query accepted, in characters."),
			boolean("ARROWHEAD_SEARCH_REGEX_ENABLED", "false", &s.SearchRegexEnabled).
				means("Allow regular-expression queries (use_regex); off by default, as a denial-of-service surface."),
			integer("ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS", "250", &s.SearchRegexTimeoutMS, between(1, 60000)).
				means("The wall-clock budget of one doc_search (literal or regular-expression) and of one regular-expression code_search, in milliseconds."),
			integer("ARROWHEAD_SEARCH_MAX_FILES", "2000", &s.SearchMaxFiles).
				means("The most files one search visits."),
			integer("ARROWHEAD_SEARCH_MAX_RESULTS", "50", &s.SearchMaxResults).
				means("The most matches one search returns."),
			integer("ARROWHEAD_SEARCH_MAX_TOTAL_BYTES", "200000", &s.SearchMaxTotalBytes).
				means("The most bytes one search reads across all files."),
			integer("ARROWHEAD_SEARCH_SNIPPET_MAX_CHARS", "200", &s.SearchSnippetMaxChars).
				means("The longest snippet returned per match, in characters."),
		),
		in(Section{Title: "doc_scan", About: "Bounds on the secrets-and-PII scan of the corpus."},
			integer("ARROWHEAD_SCAN_MAX_FILES", "2000", &s.ScanMaxFiles).
				means("The most files one scan visits."),
			integer("ARROWHEAD_SCAN_PER_FILE_MAX_BYTES", "1000000", &s.ScanPerFileMaxBytes).
				means("The most bytes a scan reads from one file."),
			seconds("ARROWHEAD_SCAN_TIMEOUT_SECONDS", "10.0", &s.ScanTimeoutSeconds).
				means("The time limit on one scan."),
			integer("ARROWHEAD_SCAN_MAX_FINDINGS", "200", &s.ScanMaxFindings).
				means("The most findings one scan reports."),
		),
		in(Section{Title: "Secret redaction", About: "The one secret scanner every read path and every model request passes: a secret is replaced by [REDACTED:TYPE:tag] (tag: a keyed hash, equal values share it). What the server sends to a model is always redacted; only what tools return to the caller may be left raw.", Extension: true},
			// An extension: the seed redacted only pack_context.
			boolean("ARROWHEAD_REDACT_READS", "true", &s.RedactReads).
				means("Whether content a tool returns (files, documents, repository files, memories, fetched pages, model answers, search snippets) passes the secret scanner; false returns it raw to the caller, but requests to a model stay redacted."),
		),
		in(Section{Title: "doc_write", About: "Bounds on writing to the corpus, and whether an overwrite is confirmed first."},
			integer("ARROWHEAD_DOC_WRITE_MAX_BYTES", "1000000", &s.DocWriteMaxBytes).
				means("The largest document one write may store, in bytes."),
			integer("ARROWHEAD_DOC_WRITE_QUOTA_BYTES", "50000000", &s.DocWriteQuotaBytes).
				means("The total size the corpus may reach through writes, in bytes."),
			boolean("ARROWHEAD_REQUIRE_WRITE_CONFIRMATION", "true", &s.RequireWriteConfirmation).
				means("Ask the client to confirm an overwrite (elicitation); a client that cannot elicit opts in with the explicit overwrite flag."),
		),
		in(Section{Title: "safe_fetch", About: "Bounds on one outbound fetch."},
			seconds("ARROWHEAD_FETCH_TIMEOUT_SECONDS", "10.0", &s.FetchTimeoutSeconds).
				means("The time limit on one fetch, redirects included."),
			integer("ARROWHEAD_FETCH_MAX_RESPONSE_BYTES", "1000000", &s.FetchMaxResponseBytes).
				means("The most response-body bytes one fetch reads."),
			integer("ARROWHEAD_FETCH_MAX_REDIRECTS", "3", &s.FetchMaxRedirects, between(0, 20)).
				means("The most redirects one fetch follows; every hop is checked again."),
		),
		in(Section{Title: "Egress allowlist", About: "Where outbound requests (safe_fetch, doc_retrieve) may go. Private, loopback, link-local and metadata addresses are refused whatever these say."},
			list("ARROWHEAD_EGRESS_ALLOWED_HOSTS", "", &s.EgressAllowedHosts, hostname).
				means("The host names outbound requests may reach, checked on every redirect hop; empty allows any public host."),
			portList("ARROWHEAD_EGRESS_ALLOWED_PORTS", "", &s.EgressAllowedPorts).
				means("Ports allowed besides 80 and 443; empty allows only those two."),
		),
		in(Section{Title: "Exfiltration guard", About: "What stops content this server returned from being sent straight back out. Egress tools (those that reach the open world: safe_fetch, doc_retrieve, notify_webhook, the assist tools, run_snippet, run_tests) are checked when their arguments carry a frame marker or item hash this server issued, or text matching (winnowing fingerprints, a shared run of 64 letters and digits is always found) what it returned to the same caller as untrusted or secret-bearing within the window. The marks live in the rate-limit store, so with Redis they hold across replicas."},
			text("ARROWHEAD_EGRESS_GUARD", "confirm", &s.EgressGuard, oneOf("refuse", "confirm", "off")).
				means("refuse refuses such a call; confirm asks the user through elicitation (accept runs it, decline refuses it) and refuses when the client cannot elicit; off checks nothing and records nothing."),
			seconds("ARROWHEAD_EGRESS_GUARD_WINDOW_SECONDS", "3600", &s.EgressGuardWindowSeconds).
				means("How long content returned to a caller stays recognisable to the guard, in seconds."),
		),
		in(Section{Title: "calculate", About: "Bounds on the arithmetic evaluator."},
			integer("ARROWHEAD_EXPRESSION_MAX_LENGTH", "200", &s.ExpressionMaxLength, between(1, 10000)).
				means("The longest expression calculate accepts, in characters."),
		),
		in(Section{Title: "SQL connector", About: "The database sql_query (and vector_search) reads, one vetted read-only statement at a time. Empty leaves the connector unconfigured and its tools refuse to run."},
			secretText("ARROWHEAD_SQL_DSN", "", &s.SQLDSN, optional(dsn)).
				means("The PostgreSQL URL the read tools connect with; a read-only role is the recommended credential."),
			text("ARROWHEAD_SQL_DIALECT", "", &s.SQLDialect, optional(oneOf("postgresql", "postgres"))).
				means("The dialect the statement guard parses; empty infers it from the DSN."),
			integer("ARROWHEAD_SQL_QUERY_MAX_LENGTH", "2000", &s.SQLQueryMaxLength, between(1, 1000000)).
				means("The longest query text accepted, in characters."),
			integer("ARROWHEAD_SQL_MAX_ROWS", "1000", &s.SQLMaxRows).
				means("The most rows one query returns."),
			integer("ARROWHEAD_SQL_MAX_BYTES", "1000000", &s.SQLMaxBytes).
				means("The most result bytes one query returns."),
			integer("ARROWHEAD_SQL_MAX_COLUMNS", "100", &s.SQLMaxColumns).
				means("The most columns one query returns."),
			seconds("ARROWHEAD_SQL_TIMEOUT_SECONDS", "10.0", &s.SQLTimeoutSeconds).
				means("The server-side statement timeout of one query."),
			integer("ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB", "64", &s.SQLTempFileLimitMB, between(0, 2097151)).
				means("The most temporary file space one query may write, in MB (PostgreSQL's temp_file_limit, set for each query); a query that needs more is refused. The read-only role needs GRANT SET ON PARAMETER temp_file_limit (PostgreSQL 15 and later); 0 leaves the role's own temp_file_limit in force."),
			integer("ARROWHEAD_SQL_WORK_MEM_MB", "16", &s.SQLWorkMemMB, between(0, 2097151)).
				means("The memory each sort or hash of one query may use before it spills to temporary files, in MB (PostgreSQL's work_mem, set for each query); 0 leaves the role's own work_mem in force."),
		),
		in(Section{Title: "pgvector search", About: "The collections the vector tools may address and the columns they read. The tenant filter is always the authenticated caller, never an argument."},
			list("ARROWHEAD_PGVECTOR_COLLECTIONS", "", &s.PgvectorCollections, identifier).
				means("The tables the vector tools may search; empty serves the embedded index's doc_chunks collection when no DSN is set, and nothing when one is."),
			text("ARROWHEAD_PGVECTOR_TENANT_COLUMN", "tenant", &s.PgvectorTenantColumn, identifier).
				means("The column holding a row's tenant, always filtered to the caller."),
			text("ARROWHEAD_PGVECTOR_ID_COLUMN", "id", &s.PgvectorIDColumn, identifier).
				means("The column holding a row's id."),
			text("ARROWHEAD_PGVECTOR_CONTENT_COLUMN", "content", &s.PgvectorContentColumn, identifier).
				means("The column holding a chunk's text."),
			text("ARROWHEAD_PGVECTOR_EMBEDDING_COLUMN", "embedding", &s.PgvectorEmbeddingColumn, identifier).
				means("The column holding a chunk's pgvector embedding."),
			text("ARROWHEAD_PGVECTOR_SOURCE_COLUMN", "source", &s.PgvectorSourceColumn, identifier).
				means("The column holding a chunk's source document, returned as its citation."),
			text("ARROWHEAD_PGVECTOR_CHUNK_INDEX_COLUMN", "chunk_index", &s.PgvectorChunkIndexColumn, identifier).
				means("The column holding a chunk's position in its document."),
			text("ARROWHEAD_PGVECTOR_CONTENT_HASH_COLUMN", "content_hash", &s.PgvectorContentHashColumn, identifier).
				means("The column holding a chunk's content hash, so a re-index re-embeds only what changed."),
			text("ARROWHEAD_PGVECTOR_TSVECTOR_COLUMN", "content_tsv", &s.PgvectorTsvectorColumn, identifier).
				means("The full-text column the keyword branch of hybrid_query searches."),
			integer("ARROWHEAD_PGVECTOR_MAX_K", "50", &s.PgvectorMaxK, between(1, 10000)).
				means("The most neighbours one vector search returns."),
			integer("ARROWHEAD_PGVECTOR_MAX_DIMENSIONS", "2000", &s.PgvectorMaxDimensions, between(1, 16000)).
				means("The widest embedding accepted."),
		),
		in(Section{Title: "Embeddings", About: "The embedder behind doc_index, vector_query and hybrid_query. The http endpoint is reached through the SSRF guard, and its key goes to no other host."},
			text("ARROWHEAD_EMBEDDING_PROVIDER", "deterministic", &s.EmbeddingProvider, oneOf("deterministic", "http")).
				means("deterministic is an offline, non-semantic embedder for tests and local use; http posts to an OpenAI-compatible embeddings endpoint."),
			integer("ARROWHEAD_EMBEDDING_DIMENSIONS", "1536", &s.EmbeddingDimensions, between(1, 16000)).
				means("The width of every embedding; it must match the vector column and not exceed ARROWHEAD_PGVECTOR_MAX_DIMENSIONS."),
			text("ARROWHEAD_EMBEDDING_ENDPOINT", "", &s.EmbeddingEndpoint, optional(httpURLWithQuery)).
				means("The embeddings URL of the http provider; its host must be on the egress allowlist (or its host:port in ARROWHEAD_LLM_INTERNAL_HOSTS)."),
			text("ARROWHEAD_EMBEDDING_MODEL", "", &s.EmbeddingModel).
				means("The model name sent to the embeddings endpoint."),
			secretText("ARROWHEAD_EMBEDDING_API_KEY", "", &s.EmbeddingAPIKey).
				means("The key sent to the embeddings endpoint, and only there."),
			integer("ARROWHEAD_EMBEDDING_BATCH_SIZE", "64", &s.EmbeddingBatchSize, between(1, 10000)).
				means("The most texts sent in one embeddings request."),
			seconds("ARROWHEAD_EMBEDDING_TIMEOUT_SECONDS", "30.0", &s.EmbeddingTimeoutSeconds).
				means("The time limit on one embeddings request."),
			integer("ARROWHEAD_EMBEDDING_MAX_TEXTS", "10000", &s.EmbeddingMaxTexts).
				means("The most texts one call may embed."),
			integer("ARROWHEAD_EMBEDDING_MAX_RESPONSE_BYTES", "8000000", &s.EmbeddingMaxResponseBytes).
				means("The largest embeddings response read, in bytes."),
		),
		in(Section{Title: "Vector ingestion", About: "How doc_index writes chunks, and how much one call may index. The write credential is kept apart from the read-only SQL DSN."},
			secretText("ARROWHEAD_VECTOR_WRITE_DSN", "", &s.VectorWriteDSN, optional(dsn)).
				means("The write-capable PostgreSQL URL doc_index writes chunks with; empty with no SQL DSN indexes into the embedded store instead."),
			integer("ARROWHEAD_VECTOR_INDEX_MAX_FILES", "500", &s.VectorIndexMaxFiles).
				means("The most documents one doc_index call indexes."),
			integer("ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS", "5000", &s.VectorIndexMaxChunks).
				means("The most chunks one doc_index call writes."),
			integer("ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS", "1500", &s.VectorIndexChunkMaxChars, between(16, 1000000)).
				means("The longest document chunk, in characters."),
			integer("ARROWHEAD_VECTOR_INDEX_CHUNK_OVERLAP", "200", &s.VectorIndexChunkOverlap, atLeast(0)).
				means("The characters neighbouring chunks share; smaller than the chunk size."),
			seconds("ARROWHEAD_VECTOR_INDEX_TIMEOUT_SECONDS", "30.0", &s.VectorIndexTimeoutSeconds).
				means("The time limit on one doc_index call."),
			integer("ARROWHEAD_CODE_CHUNK_MAX_CHARS", "2000", &s.CodeChunkMaxChars, between(16, 1000000)).
				means("The longest chunk of a source file, which is split along its structure."),
			boolean("ARROWHEAD_INDEX_REUSE_UNCHANGED", "true", &s.IndexReuseUnchanged).
				means("Re-embed only chunks whose content hash changed; false deletes and re-inserts a document's chunks (for a schema without the hash column)."),
		),
		in(Section{Title: "Hybrid retrieval", About: "How hybrid_query fuses vector similarity with full-text rank (reciprocal rank fusion)."},
			integer("ARROWHEAD_HYBRID_RRF_K", "60", &s.HybridRRFK).
				means("The k constant of reciprocal rank fusion: larger flattens the weight of top ranks."),
			integer("ARROWHEAD_HYBRID_CANDIDATE_MULTIPLIER", "4", &s.HybridCandidateMultiplier, between(1, 100)).
				means("Each branch's candidate pool, as a multiple of k."),
			text("ARROWHEAD_FTS_LANGUAGE", "english", &s.FTSLanguage, identifier).
				means("The PostgreSQL text search configuration (an installed regconfig) of the keyword branch."),
		),
		in(Section{Title: "Repo intelligence", About: "The read-only source tree the repo tools serve, apart from the corpus: version-control and dependency directories pruned, binary files refused, every walk capped."},
			text("ARROWHEAD_REPO_ROOT", "repo", &s.RepoRoot, nonEmpty).
				means("The directory holding the source tree; a coding deployment must point it at a real tree."),
			integer("ARROWHEAD_REPO_MAX_FILE_BYTES", "500000", &s.RepoMaxFileBytes).
				means("The largest source file read, in bytes."),
			list("ARROWHEAD_REPO_ALLOWED_EXTENSIONS", ".c,.cpp,.cs,.go,.h,.hpp,.java,.js,.json,.jsx,.kt,.md,.php,.py,.pyi,.rb,.rs,.scala,.sh,.sql,.swift,.toml,.ts,.tsx,.txt,.yaml,.yml", &s.RepoAllowedExtensions, extension).
				means("The file extensions the repo tools read, beside the exact file names of ARROWHEAD_REPO_ALLOWED_NAMES."),
			list("ARROWHEAD_REPO_ALLOWED_NAMES", "go.mod,go.sum,go.work,go.work.sum,Makefile,GNUmakefile,makefile,Dockerfile,Containerfile,Jenkinsfile,Procfile,Vagrantfile,Gemfile,Gemfile.lock,Rakefile,Pipfile,Pipfile.lock,poetry.lock,uv.lock,Cargo.lock,yarn.lock,composer.lock,pubspec.lock,mix.lock,flake.lock,Podfile.lock,LICENSE,LICENCE,COPYING,NOTICE,AUTHORS,CONTRIBUTORS,CODEOWNERS,README,CHANGELOG,VERSION,BUILD,WORKSPACE,.gitignore,.gitattributes,.dockerignore,.editorconfig", &s.RepoAllowedNames, fileName).
				means("Exact file names the repo tools read whatever their extension (case-sensitive): build, module, lock, licence and ignore files an agent needs. CI workflow YAML is served by its .yml/.yaml extension."),
			list("ARROWHEAD_REPO_EXCLUDED_DIRS", ".git,.hg,.svn,.venv,node_modules,__pycache__,dist,build,target", &s.RepoExcludedDirs, dirName).
				means("Directory names pruned from every walk."),
			integer("ARROWHEAD_REPO_SEARCH_MAX_FILES", "5000", &s.RepoSearchMaxFiles).
				means("The most files one code_search visits, in path order; a search stopped by it says so and how many files it left."),
			integer("ARROWHEAD_REPO_SEARCH_MAX_TOTAL_BYTES", "268435456", &s.RepoSearchMaxTotalBytes).
				means("The most bytes one code_search reads across all files (256 MiB); the file that crosses it is searched only up to it."),
			integer("ARROWHEAD_REPO_SEARCH_TIMEOUT_MS", "10000", &s.RepoSearchTimeoutMS, between(1, 600000)).
				means("The wall-clock budget of one literal code_search, in milliseconds; a regular-expression code_search keeps ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS."),
			integer("ARROWHEAD_SYMBOL_MAP_MAX_FILES", "500", &s.SymbolMapMaxFiles).
				means("The most files one symbol_map parses."),
			integer("ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS", "5000", &s.SymbolMapMaxSymbols).
				means("The most symbols one symbol_map returns."),
			integer("ARROWHEAD_DEPENDENCY_GRAPH_MAX_FILES", "500", &s.DependencyGraphMaxFiles).
				means("The most files one dependency_graph reads."),
		),
		in(Section{Title: "Completion backend", About: "The model behind the assist tools. Keys are supplied here and never appear in an error; a private endpoint must be named in ARROWHEAD_LLM_INTERNAL_HOSTS to be reachable."},
			text("ARROWHEAD_LLM_PROVIDER", "none", &s.LLMProvider, oneOf("none", "anthropic", "openai", "sampling")).
				means("none keeps the assist tools refusing; anthropic posts to the Messages API; openai to any OpenAI-compatible chat-completions URL; sampling asks the client's own model."),
			text("ARROWHEAD_LLM_ENDPOINT", "", &s.LLMEndpoint, optional(httpURLWithQuery)).
				means("The model API URL; required for openai."),
			text("ARROWHEAD_LLM_MODEL", "", &s.LLMModel).
				means("The model name sent with each request."),
			secretText("ARROWHEAD_LLM_API_KEY", "", &s.LLMAPIKey).
				means("The key sent to the model endpoint, and only there."),
			integer("ARROWHEAD_LLM_MAX_TOKENS", "1024", &s.LLMMaxTokens, between(1, 1000000)).
				means("The most tokens one completion may produce."),
			seconds("ARROWHEAD_LLM_TIMEOUT_SECONDS", "60.0", &s.LLMTimeoutSeconds).
				means("The time limit on one completion."),
			integer("ARROWHEAD_LLM_MAX_PROMPT_CHARS", "32000", &s.LLMMaxPromptChars).
				means("The longest prompt sent to the model, in characters."),
			list("ARROWHEAD_LLM_INTERNAL_HOSTS", "", &s.LLMInternalHosts, hostPort).
				means("Exact host:port pairs of private model or embedding servers (Ollama, vLLM) the SSRF guard admits."),
			integer("ARROWHEAD_DIFF_MAX_BYTES", "200000", &s.DiffMaxBytes).
				means("The largest diff summarize_diff accepts, in bytes."),
		),
		in(Section{Title: "Sandboxed execution", About: "The exec family: off by default, and even when on, the execute action must be granted in the policy. The default runner is bubblewrap (no root needed where unprivileged user namespaces are enabled): no network, read-only system directories, its own sized scratch, temporary directories and shared memory per run, and a cgroup per run (memory.max, pids.max) where the host allows one: a root server, or one whose own cgroup v2 is delegated to it with the memory and pids controllers; elsewhere, as for most non-root servers, memory and processes are bounded per process (rlimits) and storage by the sized tmpfs, and each result's receipt says which (limit_scope). Groups a crashed server left behind are removed at start. Where no confined runner can run, exec refuses to start. The subprocess runner shares the host's network and read-only files and is refused unless the server runs as root."},
			boolean("ARROWHEAD_EXEC_ENABLED", "false", &s.ExecEnabled).
				means("Serve the exec family (run_snippet, run_tests)."),
			text("ARROWHEAD_EXEC_RUNNER", "auto", &s.ExecRunner, oneOf("auto", "subprocess", "container", "bubblewrap")).
				means("What runs the code: auto (bubblewrap, refused where it cannot run), bubblewrap namespaces, a container (no network, read-only root) or a subprocess in its own namespaces (root servers only)."),
			text("ARROWHEAD_EXEC_CONTAINER_IMAGE", "", &s.ExecContainerImage).
				means("The image the container runner starts; required by that runner."),
			text("ARROWHEAD_EXEC_WORKDIR", "exec-scratch", &s.ExecWorkdir, nonEmpty).
				means("The scratch directory runs happen in. It may not lie inside ARROWHEAD_REPO_ROOT, ARROWHEAD_DOCS_ROOT or ARROWHEAD_JAIL_ROOT: the server refuses to start rather than let the file tools serve the runs."),
			integer("ARROWHEAD_EXEC_CPU_SECONDS", "10", &s.ExecCPUSeconds, between(1, 86400)).
				means("The CPU-time limit of one run_snippet process, in seconds."),
			seconds("ARROWHEAD_EXEC_WALL_SECONDS", "30.0", &s.ExecWallSeconds).
				means("The wall-clock limit of one run_snippet."),
			seconds("ARROWHEAD_EXEC_TEST_WALL_SECONDS", "120.0", &s.ExecTestWallSeconds).
				means("The wall-clock limit of one run_tests."),
			integer("ARROWHEAD_EXEC_MEMORY_BYTES", "512000000", &s.ExecMemoryBytes, atLeast(1<<20)).
				means("The memory limit of one run_snippet process (its address space), in bytes."),
			integer("ARROWHEAD_EXEC_TEST_MEMORY_BYTES", "4000000000", &s.ExecTestMemoryBytes, atLeast(1<<20)).
				means("The memory limit of each run_tests process (its address space), in bytes: the Go toolchain reserves about 2 GB of address space at start."),
			integer("ARROWHEAD_EXEC_TEST_CPU_SECONDS", "300", &s.ExecTestCPUSeconds, between(1, 86400)).
				means("The CPU-time limit of each run_tests process, in seconds: compilers and test binaries use several cores."),
			integer("ARROWHEAD_EXEC_MAX_OUTPUT_BYTES", "200000", &s.ExecMaxOutputBytes).
				means("The most output kept from one run, in bytes."),
			integer("ARROWHEAD_EXEC_MAX_CODE_BYTES", "100000", &s.ExecMaxCodeBytes).
				means("The largest snippet accepted, in bytes."),
			integer("ARROWHEAD_EXEC_MAX_COPY_BYTES", "50000000", &s.ExecMaxCopyBytes).
				means("The most bytes run_tests copies into the sandbox."),
			integer("ARROWHEAD_EXEC_COPY_MAX_FILES", "500", &s.ExecCopyMaxFiles).
				means("The most files run_tests copies into the sandbox."),
			text("ARROWHEAD_EXEC_TEST_COMMAND", "", &s.ExecTestCommand, optional(commandLine)).
				means("The command run_tests runs in the copied project, split like a shell line but run without a shell; its program is found on the server's PATH at start. Empty detects it from the project: go test -json for a go.mod, pytest (or unittest discovery) for a Python project, npm test for a package.json test script."),
		),
		in(Section{Title: "Working sets and context packer", About: "Owner-scoped working sets of pinned references, and the token-budgeted bundles pack_context assembles from them."},
			integer("ARROWHEAD_WORKINGSET_MAX_SETS", "100", &s.WorkingsetMaxSets).
				means("The most working sets one owner may keep."),
			integer("ARROWHEAD_WORKINGSET_MAX_ITEMS", "200", &s.WorkingsetMaxItems).
				means("The most items one working set may pin."),
			integer("ARROWHEAD_PACK_MAX_TOKENS", "8000", &s.PackMaxTokens).
				means("The largest token budget pack_context accepts."),
		),
		in(Section{Title: "Agent memory and scratchpad", About: "Owner-scoped memories in namespaces, and an exact-key scratchpad, with the bounds that keep one caller from growing them without limit."},
			text("ARROWHEAD_MEMORY_ROOT", "memory", &s.MemoryRoot, nonEmpty).
				means("The seed's file memory backend directory; this server keeps memories in the embedded store under ARROWHEAD_DATA_DIR (or in PostgreSQL with ARROWHEAD_MEMORY_DSN) and does not read it."),
			secretText("ARROWHEAD_MEMORY_DSN", "", &s.MemoryDSN, optional(dsn)).
				means("A write-capable PostgreSQL URL for memories, apart from the read-only SQL DSN (run arrowhead migrate with it first); recall is semantic there once ARROWHEAD_EMBEDDING_PROVIDER is http. Empty keeps memories in the embedded store, recalled by keyword."),
			integer("ARROWHEAD_MEMORY_MAX_CONTENT_BYTES", "100000", &s.MemoryMaxContentBytes).
				means("The largest memory content, in bytes."),
			integer("ARROWHEAD_MEMORY_MAX_METADATA_BYTES", "4096", &s.MemoryMaxMetadataBytes).
				means("The largest metadata of one memory, in bytes."),
			integer("ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE", "500", &s.MemoryMaxEntriesPerNamespace).
				means("The most memories one namespace holds."),
			integer("ARROWHEAD_MEMORY_MAX_NAMESPACES", "50", &s.MemoryMaxNamespaces).
				means("The most namespaces one owner may have."),
			integer("ARROWHEAD_MEMORY_QUOTA_BYTES", "50000000", &s.MemoryQuotaBytes).
				means("The total memory bytes one owner may store."),
			integer("ARROWHEAD_MEMORY_MAX_K", "20", &s.MemoryMaxK).
				means("The most memories one memory_search returns."),
			integer("ARROWHEAD_KV_MAX_KEYS", "1000", &s.KVMaxKeys).
				means("The most scratchpad keys one owner may hold."),
			integer("ARROWHEAD_KV_MAX_VALUE_BYTES", "100000", &s.KVMaxValueBytes).
				means("The largest scratchpad value, in bytes."),
			integer("ARROWHEAD_KV_MAX_TTL_SECONDS", "604800", &s.KVMaxTTLSeconds).
				means("The longest time-to-live a scratchpad value may ask for, in seconds."),
		),
		in(Section{Title: "Timer tasks", About: "Bounds on the timers task_schedule sets."},
			seconds("ARROWHEAD_TASK_SCHEDULE_MAX_DELAY_SECONDS", "86400.0", &s.TaskScheduleMaxDelaySeconds).
				means("The longest delay before a timer fires."),
			seconds("ARROWHEAD_TASK_SCHEDULE_MIN_REPEAT_SECONDS", "60.0", &s.TaskScheduleMinRepeatSeconds).
				means("The shortest interval a repeating timer may have."),
			integer("ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER", "20", &s.TaskScheduleMaxPerOwner).
				means("The most pending timers one owner may have."),
			integer("ARROWHEAD_TASK_PAYLOAD_MAX_BYTES", "16384", &s.TaskPayloadMaxBytes).
				means("The largest payload a timer carries, in bytes."),
		),
		in(Section{Title: "Embedded store", About: "Where durable state lives on one machine with no database service.", Extension: true},
			// An extension: the seed had no database-free store.
			text("ARROWHEAD_DATA_DIR", "data", &s.DataDir, nonEmpty).
				means("The directory of the embedded store: memories, kv entries, working sets, the embedded vector index, tasks and timers in arrowhead.sqlite, which every server process on the machine shares (unless ARROWHEAD_STATE_DSN or ARROWHEAD_MEMORY_DSN moves them to PostgreSQL), so they survive a restart. An arrowhead.db left by the previous release is imported once at first start. It may not lie inside ARROWHEAD_REPO_ROOT, ARROWHEAD_DOCS_ROOT or ARROWHEAD_JAIL_ROOT: the server refuses to start rather than let the file tools serve the store and the signing key."),
			integer("ARROWHEAD_DATA_MIN_FREE_BYTES", "64000000", &s.DataMinFreeBytes, atLeast(0)).
				means("The free space on ARROWHEAD_DATA_DIR's disk under which /ready reports the embedded store degraded (0 checks none). A full disk is reported down: the store then refuses writes but still deletes, from space it keeps in reserve."),
		),
		in(Section{Title: "Shared state", About: "What replicas behind one load balancer share beyond memories and rate budgets: working sets, tasks and timers.", Extension: true},
			// An extension: the seed kept these per process.
			secretText("ARROWHEAD_STATE_DSN", "", &s.StateDSN, optional(dsn)).
				means("A write-capable PostgreSQL URL through which replicas share working sets, tasks and timers (it may name the ARROWHEAD_MEMORY_DSN database; arrowhead migrate creates the tables); empty keeps them in the embedded store."),
		),
		in(Section{Title: "Outbound webhook notifications", About: "Where notify_webhook may post. Even an allowlisted target is SSRF-guarded, and the notify action must be granted in the policy."},
			list("ARROWHEAD_NOTIFY_ALLOWLIST", "", &s.NotifyAllowlist, notifyPrefix).
				means("The URL prefixes notify_webhook may post to; empty leaves the notify family unserved, and a malformed entry fails start-up."),
			seconds("ARROWHEAD_NOTIFY_TIMEOUT_SECONDS", "10.0", &s.NotifyTimeoutSeconds).
				means("The time limit on one delivery."),
			integer("ARROWHEAD_NOTIFY_MAX_PAYLOAD_BYTES", "100000", &s.NotifyMaxPayloadBytes).
				means("The largest JSON payload one delivery sends, in bytes."),
			integer("ARROWHEAD_NOTIFY_MAX_RESPONSE_BYTES", "10000", &s.NotifyMaxResponseBytes).
				means("The most response bytes read back from a delivery."),
			// An extension: Standard Webhooks signing of every delivery.
			secretText("ARROWHEAD_NOTIFY_SIGNING_SECRET", "", &s.NotifySigningSecret, optional(webhookSecret)).
				means("The Standard Webhooks key that signs every delivery; empty sends them unsigned."),
		),
		in(Section{Title: "Abuse controls", About: "Per-caller, per-minute ceilings on every tool, resource read, prompt and completion. With Redis the buckets are shared across replicas; without it they apply per process."}, slices.Concat([]*Var{
			boolean("ARROWHEAD_RATE_LIMIT_ENABLED", "true", &s.RateLimitEnabled).
				means("Enforce the per-minute ceilings below."),
		},
			// Every tool's own ceiling, generated from the tools'
			// definitions (ceilings.go).
			s.toolLimits(ceilings),
			[]*Var{
				s.limit("ARROWHEAD_RESOURCE_READ_PER_MINUTE", "60").means("Resource reads per caller per minute."),
				s.limit("ARROWHEAD_PROMPT_GET_PER_MINUTE", "60").means("Prompt gets per caller per minute."),
				s.limit("ARROWHEAD_COMPLETION_PER_MINUTE", "60").means("Argument completions per caller per minute."),
				s.limit("ARROWHEAD_DEFAULT_TOOL_PER_MINUTE", "60").means("The ceiling of a tool that declares no variable of its own."),
				secretText("ARROWHEAD_REDIS_URL", "", &s.RedisURL, optional(redisURL)).
					means("The Redis that shares the rate-limit buckets across replicas, so a caller cannot multiply its budget; empty keeps them per process."),
				integer("ARROWHEAD_RATE_LIMIT_FALLBACK_SHARE", "0", &s.RateLimitFallbackShare, between(0, 100)).
					means("Percent of each ceiling one replica enforces on its own while Redis is unreachable; 0 derives it as the ceiling divided by the replicas last seen alive through Redis (each replica heartbeats there every 5 seconds). Rounded down, at least one call a minute."),
			})...,
		),
		in(Section{Title: "Kill switch", About: "Components taken out of service without a redeploy."},
			list("ARROWHEAD_DISABLED_TOOLS", "", &s.DisabledTools, componentName).
				means("Tool, prompt or resource names (a resource by name, URI or template) taken out of service: left out of listings, every call refused. The global, static switch; `arrowhead kill` and the admin endpoint throw live, scoped rules beside it."),
		),
		in(Section{Title: "Canaries", About: "Planted honeytokens: one seen in a call's arguments or in what a call sends out trips the caller."},
			secretList("ARROWHEAD_CANARY_TOKENS", "", &s.CanaryTokens).
				means("Canary values (at least 12 characters each) planted in the corpus, repository or database, as `arrowhead canary new` mints them. A canary in any argument or egress (an egress tool's arguments, a model request), also percent-encoded, base64, hex, fullwidth or split by zero-width characters, takes every egress tool away from that caller on every replica."),
			text("ARROWHEAD_CANARY_FILE", "", &s.CanaryFile).
				means("A file listing more canary values, one a line (blank lines and lines starting with # are skipped); read at start."),
			integer("ARROWHEAD_CANARY_TRIP_SECONDS", "3600", &s.CanaryTripSeconds, between(1, 30*24*3600)).
				means("How long a tripped canary takes the egress tools away from the caller, in seconds."),
		),
		in(Section{Title: "Cache hints", About: "How long a client may cache results; both ride in the result's _meta with a private cache scope."},
			integer("ARROWHEAD_TOOL_LIST_TTL_MS", "3600000", &s.ToolListTTLMS, atLeast(0)).
				means("How long a client may cache a list result, in milliseconds."),
			integer("ARROWHEAD_RESOURCE_READ_TTL_MS", "60000", &s.ResourceReadTTLMS, atLeast(0)).
				means("How long a client may cache one resource read, in milliseconds."),
		),
		in(Section{Title: "Observability", About: "Where traces, metrics and log records go. With no endpoint telemetry is a no-op; the audit log is JSON on stdout (stderr over stdio) regardless."},
			text("ARROWHEAD_OTEL_EXPORTER_OTLP_ENDPOINT", "", &s.OTelExporterOTLPEndpoint, optional(httpURLWithPath)).
				means("The OTLP/HTTP collector base URL that traces, metrics and logs are exported to; empty exports nothing."),
			secretText("ARROWHEAD_OTEL_EXPORTER_OTLP_HEADERS", "", &s.OTelExporterOTLPHeaders, optional(headerPairs)).
				means("Headers sent to the collector, such as its API key."),
			text("ARROWHEAD_OTEL_SERVICE_NAME", "arrowhead", &s.OTelServiceName, nonEmpty).
				means("The service.name the telemetry carries."),
			// An extension: a scrape endpoint apart from the public listener.
			text("ARROWHEAD_METRICS_ADDR", "", &s.MetricsAddr, optional(listenAddr)).
				means("Where a separate Prometheus GET /metrics listener binds (a bare port means loopback), never the public port; empty serves no scrape endpoint."),
		),
		in(Section{Title: "Attestation", About: "The server's Ed25519 attestation key: it signs the manifest of the tool surface each caller sees and the audit log's checkpoints, and its public half is published so clients and auditors verify both offline.", Extension: true},
			secretText("ARROWHEAD_ATTESTATION_KEY", "", &s.AttestationKey).
				means("The attestation key: a PEM PKCS#8 Ed25519 private key given inline, or the path of a file holding one; empty generates one once into ARROWHEAD_DATA_DIR (attestation-key.pem, mode 0600), which every process sharing that directory then uses. Replicas behind one load balancer need the same key."),
			integer("ARROWHEAD_AUDIT_CHECKPOINT_LINES", "1000", &s.AuditCheckpointLines).
				means("The audit log writes a signed checkpoint line after this many chained lines (and every ARROWHEAD_AUDIT_CHECKPOINT_SECONDS, and at shutdown); arrowhead audit verify vouches for lines up to the last checkpoint."),
			seconds("ARROWHEAD_AUDIT_CHECKPOINT_SECONDS", "60", &s.AuditCheckpointSeconds).
				means("The longest an audit line waits for a signed checkpoint: one is written this often when lines were written since the last."),
		),
	)
}
