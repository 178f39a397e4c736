// Package config reads ARROWHEAD_* settings with viper: from the process
// environment, a local .env file, and an optional config file, in that order
// of precedence. Parsing and validation belong to core/settings; this
// package only finds the raw values.
package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/viper"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// ConfigFileVar names an optional YAML, TOML or JSON file holding ARROWHEAD_*
// keys. It is read by this adapter only and is not a server setting.
const ConfigFileVar = "ARROWHEAD_CONFIG_FILE"

// DefaultEnvFile is the .env file honoured in the working directory.
const DefaultEnvFile = ".env"

// Options say where to look.
type Options struct {
	// EnvFile is the dotenv file to read; "" means DefaultEnvFile. A missing
	// file is not an error.
	EnvFile string
	// ConfigFile overrides ARROWHEAD_CONFIG_FILE. A named file that is
	// missing is an error.
	ConfigFile string
	// LookupEnv reads the process environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Environ lists the environment's variable names for UnknownWarnings;
	// nil means os.Environ's.
	Environ func() []string
}

// Load returns validated settings or a *settings.Error naming the first
// invalid variable.
func Load(opts Options) (*settings.Settings, error) {
	lookup, err := Lookup(opts)
	if err != nil {
		return nil, err
	}
	return settings.Load(lookup)
}

// Lookup builds the raw-value lookup: environment first, then the config
// file, then .env.
func Lookup(opts Options) (settings.Lookup, error) {
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	envFile := opts.EnvFile
	if envFile == "" {
		envFile = DefaultEnvFile
	}
	dotenv, err := readFile(envFile, "env", false)
	if err != nil {
		return nil, err
	}
	cfgPath := opts.ConfigFile
	if cfgPath == "" {
		cfgPath, _ = env(ConfigFileVar)
		if cfgPath == "" {
			cfgPath, _ = lookupViper(dotenv, ConfigFileVar)
		}
	}
	var file *viper.Viper
	if cfgPath != "" {
		if file, err = readFile(cfgPath, "", true); err != nil {
			return nil, err
		}
	}
	return func(name string) (string, bool) {
		if v, ok := env(name); ok {
			return v, true
		}
		if v, ok := lookupViper(file, name); ok {
			return v, true
		}
		return lookupViper(dotenv, name)
	}, nil
}

func lookupViper(v *viper.Viper, name string) (string, bool) {
	if v == nil {
		return "", false
	}
	key := strings.ToLower(name)
	if !v.IsSet(key) {
		return "", false
	}
	val := v.Get(key)
	switch t := val.(type) {
	case string:
		return t, true
	case []any:
		parts := make([]string, 0, len(t))
		for _, p := range t {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, ","), true
	case nil:
		return "", true
	default:
		return fmt.Sprint(t), true
	}
}

// readFile loads one file with its own viper instance. The file's contents
// never reach an error message (it may hold secrets).
func readFile(path, typ string, required bool) (*viper.Viper, error) {
	if _, err := os.Stat(path); err != nil {
		if !required && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: the configuration file cannot be read", ConfigFileVar)
	}
	v := viper.New()
	v.SetConfigFile(path)
	if typ != "" {
		v.SetConfigType(typ)
	}
	if err := v.ReadInConfig(); err != nil {
		if typ == "env" {
			return nil, errors.New("the .env file is not valid KEY=VALUE lines")
		}
		return nil, fmt.Errorf("%s: the configuration file is not valid YAML, TOML or JSON", ConfigFileVar)
	}
	return v, nil
}
