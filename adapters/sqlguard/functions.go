package sqlguard

import "strings"

// allowedFunctions are the functions a caller may call by name, with or
// without a pg_catalog. prefix. Every entry is a pure (or, for now() and
// its kin, stable) built-in of PostgreSQL 12 and later that reads no
// table, file, setting or network resource by name, and whose name
// PostgreSQL accepts unquoted as an ordinary function call. Anything else is
// refused, including every user-defined function: an allowlist fails closed
// when PostgreSQL or an extension adds a function.
//
// The special forms the grammar rewrites into calls (EXTRACT, SUBSTRING,
// POSITION, TRIM, GREATEST, LEAST, CURRENT_DATE, AT TIME ZONE, LIKE ...
// ESCAPE) are handled in printer.go; substring, strpos and the trims are
// also listed here because the printer writes them back as ordinary
// pg_catalog calls.
var allowedFunctions = setOf(
	// Aggregates.
	"count", "sum", "avg", "min", "max",
	"string_agg", "array_agg", "bool_and", "bool_or", "every",
	"json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg",
	"bit_and", "bit_or",
	"stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
	"corr", "covar_pop", "covar_samp",
	// Window functions.
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
	"lag", "lead", "first_value", "last_value", "nth_value",
	// Strings.
	"lower", "upper", "initcap", "length", "char_length", "character_length",
	"octet_length", "substr", "substring", "btrim", "ltrim", "rtrim", "concat", "concat_ws",
	"replace", "split_part", "strpos", "left", "right", "lpad", "rpad",
	"reverse", "translate", "starts_with", "ascii", "chr", "md5", "to_hex",
	"regexp_replace", "regexp_match", "regexp_matches", "regexp_split_to_array",
	// Numbers.
	"abs", "ceil", "ceiling", "floor", "round", "trunc", "mod", "div",
	"power", "pow", "sqrt", "cbrt", "exp", "ln", "log", "log10", "sign",
	"pi", "degrees", "radians", "width_bucket", "num_nulls", "num_nonnulls",
	// Dates and times.
	"now", "date_trunc", "date_part", "age", "to_char", "to_date",
	"to_timestamp", "to_number", "make_date", "make_time", "make_timestamp",
	"make_timestamptz", "make_interval", "justify_days", "justify_hours",
	"justify_interval", "isfinite",
	// JSON.
	"to_json", "to_jsonb", "row_to_json", "array_to_json",
	"json_build_object", "jsonb_build_object", "json_build_array", "jsonb_build_array",
	"json_extract_path", "json_extract_path_text",
	"jsonb_extract_path", "jsonb_extract_path_text",
	"json_array_length", "jsonb_array_length", "json_typeof", "jsonb_typeof",
	"json_array_elements", "json_array_elements_text",
	"jsonb_array_elements", "jsonb_array_elements_text",
	"json_each", "json_each_text", "jsonb_each", "jsonb_each_text",
	"json_object_keys", "jsonb_object_keys", "jsonb_strip_nulls", "jsonb_pretty",
	"jsonb_set",
	// Arrays and sets.
	"array_length", "array_lower", "array_upper", "array_position",
	"array_positions", "array_to_string", "string_to_array", "cardinality",
	"array_append", "array_prepend", "array_cat", "array_remove", "array_replace",
	"unnest", "generate_series",
)

// deniedExact and deniedPrefixes name functions refused with their own
// reason wherever they appear. None is on the allowlist; the list exists so
// that the refusal says why and so the tests can prove each is found in
// every position. Names are compared lower-cased: a quoted "PG_SLEEP" names
// a different function in PostgreSQL, but it is refused either way.
var deniedExact = setOf(
	"pg_read_file", "pg_read_binary_file", "pg_stat_file",
	"pg_terminate_backend", "pg_cancel_backend",
	"set_config", "current_setting", "pg_reload_conf", "pg_rotate_logfile",
	"pg_promote", "pg_start_backup", "pg_stop_backup",
	"nextval", "setval", "currval", "lastval", "setseed",
	"pg_notify", "pg_export_snapshot", "pg_logdir_ls",
	"loread", "lowrite",
	"ts_stat", // runs a query given as text
	"gin_clean_pending_list", "brin_desummarize_range",
	"pg_truncate_visibility_map",
)

var deniedPrefixes = []string{
	"pg_read_", "pg_ls_", "pg_file_", "lo_", "dblink",
	"query_to_xml", "table_to_xml", "cursor_to_xml", "database_to_xml", "schema_to_xml",
	"pg_sleep", "pg_advisory", "pg_try_advisory",
	"pg_create_", "pg_drop_", "pg_copy_", "pg_replication_", "pg_logical_",
	"pg_switch_", "pg_backup_", "pg_wal_", "pg_xlog_", "pg_current_wal",
	"pg_current_xact_id", "txid_",
	"pg_stat_reset", "pg_signal_", "pg_import_", "pg_log_",
	"brin_summarize_",
}

// deniedFunction reports whether name (as written, any case) is on the
// denylist.
func deniedFunction(name string) bool {
	lname := strings.ToLower(name)
	if _, ok := deniedExact[lname]; ok {
		return true
	}
	for _, p := range deniedPrefixes {
		if strings.HasPrefix(lname, p) {
			return true
		}
	}
	return false
}

func setOf(names ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}
