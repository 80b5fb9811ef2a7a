#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing (scripts/setup.sh),
# then vet and every test, against real throwaway servers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH=$PATH:/usr/local/go/bin
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
STACKTUNE_REQUIRE_BROWSER=1 go test -count=1 -timeout 20m ./...
