#!/usr/bin/env bash
# Fetches the pinned Mermaid release from the npm registry and stores its browser bundle,
# gzipped, with its licence, in simulator/dashboard/assets (run by go generate in that
# package). The result is committed: building and testing need no npm.
set -euo pipefail

MERMAID_VERSION=11.17.2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$here/simulator/dashboard/assets"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "mermaid@$MERMAID_VERSION" >/dev/null)
tar -xzf "$tmp/mermaid-$MERMAID_VERSION.tgz" -C "$tmp"
# -n: no name or time in the header, so the same bundle gives the same bytes.
gzip -9 -n -c "$tmp/package/dist/mermaid.min.js" >"$out/mermaid.min.js.gz"
{
	echo "mermaid $MERMAID_VERSION (https://www.npmjs.com/package/mermaid), dist/mermaid.min.js"
	echo
	cat "$tmp/package/LICENSE"
} >"$out/mermaid.LICENSE.txt"
echo "mermaid $MERMAID_VERSION -> $out/mermaid.min.js.gz ($(wc -c <"$out/mermaid.min.js.gz") bytes)"
