#!/usr/bin/env bash
# Installs what stacktune needs on a Debian machine (as root, idempotent) and
# builds bin/stacktune. Servers are only installed, never configured or
# started here: stacktune starts its own throwaway instances.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian package -> a binary it provides (or, for a library, a path it installs).
declare -A need=(
  [mariadb-server]=mariadbd
  [nginx]=nginx
  [memcached]=memcached
  [redis-server]=redis-server
  [percona-toolkit]=pt-query-digest
  [sysbench]=sysbench
  [wrk]=wrk
  [mysqltuner]=mysqltuner
  [chromium]=chromium
  [openssh-server]=sshd
  [python3-locust]=locust
  [python3-lxml]=/usr/lib/python3/dist-packages/lxml
  [python3-cssselect]=/usr/lib/python3/dist-packages/cssselect
  [php-fpm]=php-fpm8.2
  [php8.2-mysql]=/etc/php/8.2/mods-available/mysqli.ini
  [curl]=curl
)
missing=()
for pkg in "${!need[@]}"; do
  bin=${need[$pkg]}
  if [[ $bin == /* ]]; then
    [ -e "$bin" ] || missing+=("$pkg")
  elif ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install Debian packages (run as root or with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Do not let package scripts start the system services.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH=$PATH:/usr/local/go/bin
  else
    echo "setup: Go 1.26 or newer is needed (https://go.dev/dl/), then run this again" >&2
    exit 1
  fi
fi
go mod download
mkdir -p bin
go build -o bin/stacktune ./cmd/stacktune
echo "setup: built bin/stacktune ($(go version | awk '{print $3}'))" >&2
