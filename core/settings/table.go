package settings

// vars is the table of every variable. Names and defaults are the seed's;
// this is the only place either is written.
func (s *Settings) vars() []*Var {
	return []*Var{
		// Profile and transport.
		text("ARROWHEAD_PROFILE", "full", &s.Profile, oneOf("core", "docs", "coding", "full")),
		text("ARROWHEAD_TRANSPORT", "stdio", &s.Transport, oneOf("stdio", "http", "streamable-http")),
		text("ARROWHEAD_HOST", "127.0.0.1", &s.Host, nonEmpty, hostname),
		integer("ARROWHEAD_PORT", "8000", &s.Port, between(0, 65535)),
		boolean("ARROWHEAD_STATELESS_HTTP", "true", &s.StatelessHTTP),
		list("ARROWHEAD_ALLOWED_HOSTS", "", &s.AllowedHosts, hostOrHostPort),
		list("ARROWHEAD_ALLOWED_ORIGINS", "", &s.AllowedOrigins, origin),

		// Auth.
		boolean("ARROWHEAD_AUTH_ENABLED", "false", &s.AuthEnabled),
		boolean("ARROWHEAD_ALLOW_INSECURE_HTTP", "false", &s.AllowInsecureHTTP),
		text("ARROWHEAD_SERVER_PUBLIC_URL", "", &s.ServerPublicURL, optional(httpURL)),
		text("ARROWHEAD_OAUTH_PROVIDER", "jwt", &s.OAuthProvider, oneOf("jwt", "workos")),
		text("ARROWHEAD_OAUTH_ISSUER", "", &s.OAuthIssuer),
		text("ARROWHEAD_OAUTH_AUDIENCE", "", &s.OAuthAudience),
		text("ARROWHEAD_OAUTH_JWKS_URI", "", &s.OAuthJWKSURI, optional(httpURLWithQuery)),
		text("ARROWHEAD_OAUTH_PUBLIC_KEY", "", &s.OAuthPublicKey),
		text("ARROWHEAD_OAUTH_AUTHKIT_DOMAIN", "", &s.OAuthAuthkitDomain, optional(authkitDomain)),
		// Extensions: the one claim scopes are read from, and whether the
		// RFC 9068 typ at+jwt is required.
		text("ARROWHEAD_OAUTH_SCOPE_CLAIM", "scope", &s.OAuthScopeClaim, oneOf("scope", "scp")),
		boolean("ARROWHEAD_OAUTH_REQUIRE_AT_JWT", "false", &s.OAuthRequireAtJWT),

		// Per-resource authorization.
		text("ARROWHEAD_AUTHZ_POLICY", "", &s.AuthzPolicy, optional(policyJSON)),

		// read_file jail.
		text("ARROWHEAD_JAIL_ROOT", "sandbox", &s.JailRoot, nonEmpty),
		integer("ARROWHEAD_READ_FILE_MAX_BYTES", "1000000", &s.ReadFileMaxBytes),

		// Document corpus.
		text("ARROWHEAD_DOCS_ROOT", "documents", &s.DocsRoot, nonEmpty),
		integer("ARROWHEAD_DOC_MAX_BYTES", "1000000", &s.DocMaxBytes),
		list("ARROWHEAD_DOC_ALLOWED_EXTENSIONS", ".json,.md,.txt", &s.DocAllowedExtensions, oneOf(".json", ".md", ".txt", ".markdown")),
		integer("ARROWHEAD_CONTENT_MAX_BYTES", "1000000", &s.ContentMaxBytes),
		integer("ARROWHEAD_JSON_MAX_DEPTH", "64", &s.JSONMaxDepth, between(1, 1000)),
		integer("ARROWHEAD_JSON_MAX_ELEMENTS", "100000", &s.JSONMaxElements),

		// doc_search.
		integer("ARROWHEAD_SEARCH_QUERY_MAX_LENGTH", "200", &s.SearchQueryMaxLength, between(1, 10000)),
		boolean("ARROWHEAD_SEARCH_REGEX_ENABLED", "false", &s.SearchRegexEnabled),
		integer("ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS", "250", &s.SearchRegexTimeoutMS, between(1, 60000)),
		integer("ARROWHEAD_SEARCH_MAX_FILES", "2000", &s.SearchMaxFiles),
		integer("ARROWHEAD_SEARCH_MAX_RESULTS", "50", &s.SearchMaxResults),
		integer("ARROWHEAD_SEARCH_MAX_TOTAL_BYTES", "200000", &s.SearchMaxTotalBytes),
		integer("ARROWHEAD_SEARCH_SNIPPET_MAX_CHARS", "200", &s.SearchSnippetMaxChars),

		// doc_scan.
		integer("ARROWHEAD_SCAN_MAX_FILES", "2000", &s.ScanMaxFiles),
		integer("ARROWHEAD_SCAN_PER_FILE_MAX_BYTES", "1000000", &s.ScanPerFileMaxBytes),
		seconds("ARROWHEAD_SCAN_TIMEOUT_SECONDS", "10.0", &s.ScanTimeoutSeconds),
		integer("ARROWHEAD_SCAN_MAX_FINDINGS", "200", &s.ScanMaxFindings),

		// doc_write.
		integer("ARROWHEAD_DOC_WRITE_MAX_BYTES", "1000000", &s.DocWriteMaxBytes),
		integer("ARROWHEAD_DOC_WRITE_QUOTA_BYTES", "50000000", &s.DocWriteQuotaBytes),
		boolean("ARROWHEAD_REQUIRE_WRITE_CONFIRMATION", "true", &s.RequireWriteConfirmation),

		// safe_fetch and egress.
		seconds("ARROWHEAD_FETCH_TIMEOUT_SECONDS", "10.0", &s.FetchTimeoutSeconds),
		integer("ARROWHEAD_FETCH_MAX_RESPONSE_BYTES", "1000000", &s.FetchMaxResponseBytes),
		integer("ARROWHEAD_FETCH_MAX_REDIRECTS", "3", &s.FetchMaxRedirects, between(0, 20)),
		list("ARROWHEAD_EGRESS_ALLOWED_HOSTS", "", &s.EgressAllowedHosts, hostname),
		portList("ARROWHEAD_EGRESS_ALLOWED_PORTS", "", &s.EgressAllowedPorts),

		// calculate.
		integer("ARROWHEAD_EXPRESSION_MAX_LENGTH", "200", &s.ExpressionMaxLength, between(1, 10000)),

		// SQL connector.
		secretText("ARROWHEAD_SQL_DSN", "", &s.SQLDSN, optional(dsn)),
		text("ARROWHEAD_SQL_DIALECT", "", &s.SQLDialect, optional(oneOf("postgresql", "postgres"))),
		integer("ARROWHEAD_SQL_QUERY_MAX_LENGTH", "2000", &s.SQLQueryMaxLength, between(1, 1000000)),
		integer("ARROWHEAD_SQL_MAX_ROWS", "1000", &s.SQLMaxRows),
		integer("ARROWHEAD_SQL_MAX_BYTES", "1000000", &s.SQLMaxBytes),
		integer("ARROWHEAD_SQL_MAX_COLUMNS", "100", &s.SQLMaxColumns),
		seconds("ARROWHEAD_SQL_TIMEOUT_SECONDS", "10.0", &s.SQLTimeoutSeconds),

		// pgvector.
		list("ARROWHEAD_PGVECTOR_COLLECTIONS", "", &s.PgvectorCollections, identifier),
		text("ARROWHEAD_PGVECTOR_TENANT_COLUMN", "tenant", &s.PgvectorTenantColumn, identifier),
		text("ARROWHEAD_PGVECTOR_ID_COLUMN", "id", &s.PgvectorIDColumn, identifier),
		text("ARROWHEAD_PGVECTOR_CONTENT_COLUMN", "content", &s.PgvectorContentColumn, identifier),
		text("ARROWHEAD_PGVECTOR_EMBEDDING_COLUMN", "embedding", &s.PgvectorEmbeddingColumn, identifier),
		text("ARROWHEAD_PGVECTOR_SOURCE_COLUMN", "source", &s.PgvectorSourceColumn, identifier),
		text("ARROWHEAD_PGVECTOR_CHUNK_INDEX_COLUMN", "chunk_index", &s.PgvectorChunkIndexColumn, identifier),
		text("ARROWHEAD_PGVECTOR_CONTENT_HASH_COLUMN", "content_hash", &s.PgvectorContentHashColumn, identifier),
		text("ARROWHEAD_PGVECTOR_TSVECTOR_COLUMN", "content_tsv", &s.PgvectorTsvectorColumn, identifier),
		integer("ARROWHEAD_PGVECTOR_MAX_K", "50", &s.PgvectorMaxK, between(1, 10000)),
		integer("ARROWHEAD_PGVECTOR_MAX_DIMENSIONS", "2000", &s.PgvectorMaxDimensions, between(1, 16000)),

		// Embeddings.
		text("ARROWHEAD_EMBEDDING_PROVIDER", "deterministic", &s.EmbeddingProvider, oneOf("deterministic", "http")),
		integer("ARROWHEAD_EMBEDDING_DIMENSIONS", "1536", &s.EmbeddingDimensions, between(1, 16000)),
		text("ARROWHEAD_EMBEDDING_ENDPOINT", "", &s.EmbeddingEndpoint, optional(httpURLWithQuery)),
		text("ARROWHEAD_EMBEDDING_MODEL", "", &s.EmbeddingModel),
		secretText("ARROWHEAD_EMBEDDING_API_KEY", "", &s.EmbeddingAPIKey),
		integer("ARROWHEAD_EMBEDDING_BATCH_SIZE", "64", &s.EmbeddingBatchSize, between(1, 10000)),
		seconds("ARROWHEAD_EMBEDDING_TIMEOUT_SECONDS", "30.0", &s.EmbeddingTimeoutSeconds),
		integer("ARROWHEAD_EMBEDDING_MAX_TEXTS", "10000", &s.EmbeddingMaxTexts),
		integer("ARROWHEAD_EMBEDDING_MAX_RESPONSE_BYTES", "8000000", &s.EmbeddingMaxResponseBytes),

		// Vector ingestion.
		secretText("ARROWHEAD_VECTOR_WRITE_DSN", "", &s.VectorWriteDSN, optional(dsn)),
		integer("ARROWHEAD_VECTOR_INDEX_MAX_FILES", "500", &s.VectorIndexMaxFiles),
		integer("ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS", "5000", &s.VectorIndexMaxChunks),
		integer("ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS", "1500", &s.VectorIndexChunkMaxChars, between(16, 1000000)),
		integer("ARROWHEAD_VECTOR_INDEX_CHUNK_OVERLAP", "200", &s.VectorIndexChunkOverlap, atLeast(0)),
		seconds("ARROWHEAD_VECTOR_INDEX_TIMEOUT_SECONDS", "30.0", &s.VectorIndexTimeoutSeconds),
		integer("ARROWHEAD_CODE_CHUNK_MAX_CHARS", "2000", &s.CodeChunkMaxChars, between(16, 1000000)),
		boolean("ARROWHEAD_INDEX_REUSE_UNCHANGED", "true", &s.IndexReuseUnchanged),

		// Embedded vector index (an extension: the seed had no database-free
		// index). Where the single-machine index persists.
		text("ARROWHEAD_DATA_DIR", "data", &s.DataDir, nonEmpty),

		// Hybrid retrieval.
		integer("ARROWHEAD_HYBRID_RRF_K", "60", &s.HybridRRFK),
		integer("ARROWHEAD_HYBRID_CANDIDATE_MULTIPLIER", "4", &s.HybridCandidateMultiplier, between(1, 100)),
		text("ARROWHEAD_FTS_LANGUAGE", "english", &s.FTSLanguage, identifier),

		// Repo intelligence.
		text("ARROWHEAD_REPO_ROOT", "repo", &s.RepoRoot, nonEmpty),
		integer("ARROWHEAD_REPO_MAX_FILE_BYTES", "500000", &s.RepoMaxFileBytes),
		list("ARROWHEAD_REPO_ALLOWED_EXTENSIONS", ".c,.cpp,.cs,.go,.h,.hpp,.java,.js,.json,.jsx,.kt,.md,.php,.py,.pyi,.rb,.rs,.scala,.sh,.sql,.swift,.toml,.ts,.tsx,.txt,.yaml,.yml", &s.RepoAllowedExtensions, extension),
		list("ARROWHEAD_REPO_EXCLUDED_DIRS", ".git,.hg,.svn,.venv,node_modules,__pycache__,dist,build,target", &s.RepoExcludedDirs, dirName),
		integer("ARROWHEAD_REPO_SEARCH_MAX_FILES", "5000", &s.RepoSearchMaxFiles),
		integer("ARROWHEAD_SYMBOL_MAP_MAX_FILES", "500", &s.SymbolMapMaxFiles),
		integer("ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS", "5000", &s.SymbolMapMaxSymbols),
		integer("ARROWHEAD_DEPENDENCY_GRAPH_MAX_FILES", "500", &s.DependencyGraphMaxFiles),

		// Completion backend.
		text("ARROWHEAD_LLM_PROVIDER", "none", &s.LLMProvider, oneOf("none", "anthropic", "openai", "sampling")),
		text("ARROWHEAD_LLM_ENDPOINT", "", &s.LLMEndpoint, optional(httpURLWithQuery)),
		text("ARROWHEAD_LLM_MODEL", "", &s.LLMModel),
		secretText("ARROWHEAD_LLM_API_KEY", "", &s.LLMAPIKey),
		integer("ARROWHEAD_LLM_MAX_TOKENS", "1024", &s.LLMMaxTokens, between(1, 1000000)),
		seconds("ARROWHEAD_LLM_TIMEOUT_SECONDS", "60.0", &s.LLMTimeoutSeconds),
		integer("ARROWHEAD_LLM_MAX_PROMPT_CHARS", "32000", &s.LLMMaxPromptChars),
		list("ARROWHEAD_LLM_INTERNAL_HOSTS", "", &s.LLMInternalHosts, hostPort),
		integer("ARROWHEAD_DIFF_MAX_BYTES", "200000", &s.DiffMaxBytes),

		// Sandboxed execution.
		boolean("ARROWHEAD_EXEC_ENABLED", "false", &s.ExecEnabled),
		text("ARROWHEAD_EXEC_RUNNER", "subprocess", &s.ExecRunner, oneOf("subprocess", "container", "bubblewrap")),
		text("ARROWHEAD_EXEC_CONTAINER_IMAGE", "", &s.ExecContainerImage),
		text("ARROWHEAD_EXEC_WORKDIR", "exec-scratch", &s.ExecWorkdir, nonEmpty),
		integer("ARROWHEAD_EXEC_CPU_SECONDS", "10", &s.ExecCPUSeconds, between(1, 86400)),
		seconds("ARROWHEAD_EXEC_WALL_SECONDS", "30.0", &s.ExecWallSeconds),
		seconds("ARROWHEAD_EXEC_TEST_WALL_SECONDS", "120.0", &s.ExecTestWallSeconds),
		integer("ARROWHEAD_EXEC_MEMORY_BYTES", "512000000", &s.ExecMemoryBytes, atLeast(1<<20)),
		integer("ARROWHEAD_EXEC_MAX_OUTPUT_BYTES", "200000", &s.ExecMaxOutputBytes),
		integer("ARROWHEAD_EXEC_MAX_CODE_BYTES", "100000", &s.ExecMaxCodeBytes),
		integer("ARROWHEAD_EXEC_MAX_COPY_BYTES", "50000000", &s.ExecMaxCopyBytes),
		integer("ARROWHEAD_EXEC_COPY_MAX_FILES", "500", &s.ExecCopyMaxFiles),
		text("ARROWHEAD_EXEC_TEST_COMMAND", "", &s.ExecTestCommand, optional(commandLine)),

		// Working sets and context packer.
		integer("ARROWHEAD_WORKINGSET_MAX_SETS", "100", &s.WorkingsetMaxSets),
		integer("ARROWHEAD_WORKINGSET_MAX_ITEMS", "200", &s.WorkingsetMaxItems),
		integer("ARROWHEAD_PACK_MAX_TOKENS", "8000", &s.PackMaxTokens),

		// Agent memory and scratchpad.
		text("ARROWHEAD_MEMORY_ROOT", "memory", &s.MemoryRoot, nonEmpty),
		secretText("ARROWHEAD_MEMORY_DSN", "", &s.MemoryDSN, optional(dsn)),
		integer("ARROWHEAD_MEMORY_MAX_CONTENT_BYTES", "100000", &s.MemoryMaxContentBytes),
		integer("ARROWHEAD_MEMORY_MAX_METADATA_BYTES", "4096", &s.MemoryMaxMetadataBytes),
		integer("ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE", "500", &s.MemoryMaxEntriesPerNamespace),
		integer("ARROWHEAD_MEMORY_MAX_NAMESPACES", "50", &s.MemoryMaxNamespaces),
		integer("ARROWHEAD_MEMORY_QUOTA_BYTES", "50000000", &s.MemoryQuotaBytes),
		integer("ARROWHEAD_MEMORY_MAX_K", "20", &s.MemoryMaxK),
		integer("ARROWHEAD_KV_MAX_KEYS", "1000", &s.KVMaxKeys),
		integer("ARROWHEAD_KV_MAX_VALUE_BYTES", "100000", &s.KVMaxValueBytes),
		integer("ARROWHEAD_KV_MAX_TTL_SECONDS", "604800", &s.KVMaxTTLSeconds),

		// Timer tasks.
		seconds("ARROWHEAD_TASK_SCHEDULE_MAX_DELAY_SECONDS", "86400.0", &s.TaskScheduleMaxDelaySeconds),
		seconds("ARROWHEAD_TASK_SCHEDULE_MIN_REPEAT_SECONDS", "60.0", &s.TaskScheduleMinRepeatSeconds),
		integer("ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER", "20", &s.TaskScheduleMaxPerOwner),
		integer("ARROWHEAD_TASK_PAYLOAD_MAX_BYTES", "16384", &s.TaskPayloadMaxBytes),

		// Outbound webhook notifications.
		list("ARROWHEAD_NOTIFY_ALLOWLIST", "", &s.NotifyAllowlist, notifyPrefix),
		seconds("ARROWHEAD_NOTIFY_TIMEOUT_SECONDS", "10.0", &s.NotifyTimeoutSeconds),
		integer("ARROWHEAD_NOTIFY_MAX_PAYLOAD_BYTES", "100000", &s.NotifyMaxPayloadBytes),
		integer("ARROWHEAD_NOTIFY_MAX_RESPONSE_BYTES", "10000", &s.NotifyMaxResponseBytes),
		// An extension: Standard Webhooks signing of every delivery.
		secretText("ARROWHEAD_NOTIFY_SIGNING_SECRET", "", &s.NotifySigningSecret, optional(webhookSecret)),

		// Abuse controls.
		boolean("ARROWHEAD_RATE_LIMIT_ENABLED", "true", &s.RateLimitEnabled),
		s.limit("ARROWHEAD_SAFE_FETCH_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_CALCULATE_PER_MINUTE", "120"),
		s.limit("ARROWHEAD_READ_FILE_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_DOC_SEARCH_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_DOC_READ_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_DOC_RETRIEVE_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_DOC_SCAN_PER_MINUTE", "20"),
		s.limit("ARROWHEAD_DOC_WRITE_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_SQL_QUERY_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_VECTOR_SEARCH_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_VECTOR_QUERY_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_HYBRID_QUERY_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_VECTOR_INDEX_PER_MINUTE", "6"),
		s.limit("ARROWHEAD_CODE_SEARCH_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_CODE_READ_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_SYMBOL_MAP_PER_MINUTE", "20"),
		s.limit("ARROWHEAD_DEPENDENCY_GRAPH_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_CODE_EXPLAIN_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_SUMMARIZE_DIFF_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_RERANK_PER_MINUTE", "20"),
		s.limit("ARROWHEAD_RUN_SNIPPET_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_RUN_TESTS_PER_MINUTE", "4"),
		s.limit("ARROWHEAD_WORKINGSET_GET_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_WORKINGSET_UPDATE_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_PACK_CONTEXT_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_TASK_START_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_TASK_GET_PER_MINUTE", "120"),
		s.limit("ARROWHEAD_TASK_UPDATE_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_TASK_LIST_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_TASK_SCHEDULE_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_MEMORY_STORE_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_MEMORY_SEARCH_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_MEMORY_LIST_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_MEMORY_DELETE_PER_MINUTE", "30"),
		s.limit("ARROWHEAD_KV_SET_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_KV_GET_PER_MINUTE", "120"),
		s.limit("ARROWHEAD_KV_DELETE_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_NOTIFY_WEBHOOK_PER_MINUTE", "10"),
		s.limit("ARROWHEAD_RESOURCE_READ_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_PROMPT_GET_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_COMPLETION_PER_MINUTE", "60"),
		s.limit("ARROWHEAD_DEFAULT_TOOL_PER_MINUTE", "60"),
		secretText("ARROWHEAD_REDIS_URL", "", &s.RedisURL, optional(redisURL)),

		// Kill switch.
		list("ARROWHEAD_DISABLED_TOOLS", "", &s.DisabledTools, componentName),

		// Cache hints.
		integer("ARROWHEAD_TOOL_LIST_TTL_MS", "3600000", &s.ToolListTTLMS, atLeast(0)),
		integer("ARROWHEAD_RESOURCE_READ_TTL_MS", "60000", &s.ResourceReadTTLMS, atLeast(0)),

		// Observability.
		text("ARROWHEAD_OTEL_EXPORTER_OTLP_ENDPOINT", "", &s.OTelExporterOTLPEndpoint, optional(httpURLWithPath)),
		secretText("ARROWHEAD_OTEL_EXPORTER_OTLP_HEADERS", "", &s.OTelExporterOTLPHeaders, optional(headerPairs)),
		text("ARROWHEAD_OTEL_SERVICE_NAME", "arrowhead", &s.OTelServiceName, nonEmpty),
		text("ARROWHEAD_METRICS_ADDR", "", &s.MetricsAddr, optional(listenAddr)),
	}
}
