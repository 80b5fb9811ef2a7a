#!/bin/sh
# fix.sh on|off: turns the board's N+1 fix (its authors in one query) on or
# off in config.json beside this script, which the app reads per request.
# The file is replaced whole (written aside, then renamed), so a request
# never reads half of it.
set -eu
case "${1:-}" in
on) v=true ;;
off) v=false ;;
*) echo "usage: $0 on|off" >&2; exit 2 ;;
esac
dir=$(dirname "$0")
printf '{"board_authors_in_one_query": %s}\n' "$v" >"$dir/config.json.tmp"
mv -f "$dir/config.json.tmp" "$dir/config.json"
echo "board_authors_in_one_query: $v"
