#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (initdb, postgres) are installed for the PostgreSQL
# store's tests, which start a throwaway cluster of their own (simulator/store/pgtest). As root
# on a Debian machine (CI) it installs Debian's postgresql package with apt-get; elsewhere it
# says how. Under CI (CI or LIFECYCLESIM_REQUIRE_POSTGRES set) missing binaries are an error,
# since the tests would fail anyway; otherwise those tests skip, saying why.
set -euo pipefail

# The directory holding initdb and postgres, as pgtest.FindBinaries looks for it.
find_postgres() {
	local d
	for d in ${LIFECYCLESIM_POSTGRES_BIN:-} $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -rn) \
		"$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"; do
		if [[ -x "$d/initdb" && -x "$d/postgres" ]]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

report() {
	echo "postgresql: $1 ($("$1/postgres" --version 2>/dev/null || echo 'version unknown'))"
}

if dir="$(find_postgres)"; then
	report "$dir"
	exit 0
fi

if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
	echo "postgresql is missing: installing Debian's postgresql package"
	export DEBIAN_FRONTEND=noninteractive
	log="$(mktemp)"
	trap 'rm -f "$log"' EXIT
	install() { apt-get install -y -qq --no-install-recommends postgresql >"$log" 2>&1; }
	if ! install; then
		apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
		install || { cat "$log" >&2; exit 1; }
	fi
	dir="$(find_postgres)" || { echo "error: postgresql installed, but no initdb and postgres under /usr/lib/postgresql/*/bin" >&2; exit 1; }
	report "$dir"
	exit 0
fi

msg="PostgreSQL is missing and cannot be installed here (needs root and apt-get): run 'sudo apt-get install -y postgresql', or set LIFECYCLESIM_POSTGRES_BIN to a directory holding initdb and postgres"
if [[ -n "${CI:-}" || -n "${LIFECYCLESIM_REQUIRE_POSTGRES:-}" ]]; then
	echo "error: $msg" >&2
	exit 1
fi
echo "warning: $msg; the PostgreSQL store's tests will skip" >&2
