#!/bin/sh
# Benchmarks doc_search's literal path (document store + search.Search) against
# grep -rF over the same generated corpus (10,000 documents, ~100 MB by
# default) and prints both times and their ratio; the target is within 2x
# of grep. Extra arguments go to the Go program, e.g.:
#
#   test/bench/docsearch/bench.sh -iter 9 -keep
#
# See main.go in this directory for what is measured.
set -eu
cd "$(dirname "$0")/../../.."
command -v grep >/dev/null || { echo "bench.sh: grep is required" >&2; exit 1; }
exec go run ./test/bench/docsearch "$@"
