#!/usr/bin/env bash
# Makes sure Debian's OpenStack client (the `openstack` command, /usr/bin/openstack) and its
# Blazar and Sahara plugins are installed for the dialects' real-client tests (TestOpenstackCLI
# in simulator/dialect/blazar and simulator/dialect/sahara). As root on a Debian machine (CI) it
# installs them with apt-get (about 215 packages, a minute or two); elsewhere it says how. Under CI (CI
# or LIFECYCLESIM_REQUIRE_OPENSTACK set) a missing client is an error, since the tests would
# fail anyway; otherwise they skip, saying why.
set -euo pipefail

packages=(python3-openstackclient python3-blazarclient python3-saharaclient)

installed() {
	[[ -x /usr/bin/openstack && -d /usr/lib/python3/dist-packages/blazarclient && -d /usr/lib/python3/dist-packages/saharaclient ]]
}

report() {
	echo "openstack: /usr/bin/openstack ($(/usr/bin/openstack --version 2>&1 || echo 'version unknown'); blazarclient, saharaclient)"
}

if installed; then
	report
	exit 0
fi

if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
	echo "the OpenStack client is missing: installing Debian's ${packages[*]} (a minute or two)"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y "${packages[@]}"; then
		apt-get update
		apt-get install -y "${packages[@]}"
	fi
	installed
	report
	exit 0
fi

msg="the OpenStack client is missing and cannot be installed here (needs root and apt-get): run 'sudo apt-get install -y ${packages[*]}'"
if [[ -n "${CI:-}" || -n "${LIFECYCLESIM_REQUIRE_OPENSTACK:-}" ]]; then
	echo "error: $msg" >&2
	exit 1
fi
echo "warning: $msg; the dialects' real-client tests will skip" >&2
