//go:build tools

// This file pins the modules the product owner named, so that go.mod holds
// them at their proven versions while the packages using them are written.
package main

import (
	_ "github.com/auxten/postgresql-parser/pkg/sql/parser"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/lestrrat-go/jwx/v2/jwt"
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/mark3labs/mcp-go/server"
	_ "github.com/pgvector/pgvector-go"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/spf13/viper"
	_ "github.com/uptrace/opentelemetry-go-extra/otelzap"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.uber.org/zap"
	_ "golang.org/x/text/unicode/norm"
)
