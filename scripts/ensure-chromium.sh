#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the dashboard's browser tests. As root on a
# Debian machine (CI) it installs it with apt-get; elsewhere it says how. Under CI
# (CI or LIFECYCLESIM_REQUIRE_BROWSER set) a missing browser is an error, since the browser
# tests would fail anyway; otherwise they skip, saying why.
set -euo pipefail

find_chromium() {
	if [[ -n "${CHROMIUM:-}" ]]; then
		command -v "$CHROMIUM"
		return
	fi
	command -v chromium || command -v chromium-browser || command -v google-chrome || command -v google-chrome-stable
}

if path="$(find_chromium 2>/dev/null)"; then
	echo "chromium: $path ($("$path" --version 2>/dev/null || echo 'version unknown'))"
	exit 0
fi

if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
	echo "chromium is missing: installing Debian's chromium (a few minutes)"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y chromium; then
		apt-get update
		apt-get install -y chromium
	fi
	path="$(find_chromium)"
	echo "chromium: $path ($("$path" --version 2>/dev/null || echo 'version unknown'))"
	exit 0
fi

msg="chromium is missing and cannot be installed here (needs root and apt-get): run 'sudo apt-get install -y chromium', or set CHROMIUM to a Chromium binary"
if [[ -n "${CI:-}" || -n "${LIFECYCLESIM_REQUIRE_BROWSER:-}" ]]; then
	echo "error: $msg" >&2
	exit 1
fi
echo "warning: $msg; the dashboard's browser tests will skip" >&2
