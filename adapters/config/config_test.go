package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func noEnv(string) (string, bool) { return "", false }

func TestDotEnvHonouredAndEnvWins(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, ".env")
	if err := os.WriteFile(envFile, []byte("ARROWHEAD_PROFILE=core\nARROWHEAD_PORT=9001\n# comment\nARROWHEAD_DISABLED_TOOLS=calculate,read_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(Options{EnvFile: envFile, LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile != "core" || s.Port != 9001 || strings.Join(s.DisabledTools, ",") != "calculate,read_file" {
		t.Fatalf("dotenv not applied: %+v", s)
	}
	env := func(k string) (string, bool) {
		if k == "ARROWHEAD_PORT" {
			return "9002", true
		}
		return "", false
	}
	s, err = Load(Options{EnvFile: envFile, LookupEnv: env})
	if err != nil || s.Port != 9002 || s.Profile != "core" {
		t.Fatalf("environment must win over .env: %v %+v", err, s)
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "arrowhead.yaml")
	if err := os.WriteFile(cfg, []byte("ARROWHEAD_PROFILE: docs\nARROWHEAD_EGRESS_ALLOWED_PORTS: [8080, 8443]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(Options{EnvFile: filepath.Join(dir, "none.env"), ConfigFile: cfg, LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile != "docs" || len(s.EgressAllowedPorts) != 2 {
		t.Fatalf("config file not applied: %+v", s)
	}
	if _, err := Load(Options{ConfigFile: filepath.Join(dir, "missing.yaml"), LookupEnv: noEnv}); err == nil {
		t.Fatal("a named config file that is missing must be an error")
	}
}

func TestInvalidValueNamesVariableNotValue(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "ARROWHEAD_SQL_DSN" {
			return "mysql://root:hunter2@db/app", true
		}
		return "", false
	}
	_, err := Load(Options{EnvFile: filepath.Join(t.TempDir(), "x"), LookupEnv: env})
	if err == nil || !strings.Contains(err.Error(), "ARROWHEAD_SQL_DSN") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got %v", err)
	}
}
