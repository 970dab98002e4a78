#!/usr/bin/env bash
# make release-check: validate .goreleaser.yml, then run the release pipeline as a snapshot
# (builds, archives, SHA256SUMS with the registry manifest; no publishing, no signing) for this
# machine's platform only, and check both binaries carry the snapshot version.
# make release-snapshot runs the same for every platform of the config.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

goreleaser=(go tool -modfile=release/go.mod goreleaser)
all_targets=${ALL_TARGETS:-0}

"${goreleaser[@]}" check

config=.goreleaser.yml
if [[ "$all_targets" != 1 ]]; then
	# The same config, narrowed to this platform: every build's goos/goarch lists.
	goos="$(go env GOOS)" goarch="$(go env GOARCH)"
	config="$(mktemp --suffix=.yml)"
	trap 'rm -f "$config"' EXIT
	sed -E -e "s/^(    goos: ).*/\1[$goos]/" -e "s/^(    goarch: ).*/\1[\"$goarch\"]/" .goreleaser.yml >"$config"
fi
"${goreleaser[@]}" release --snapshot --clean --skip=publish,sign --config "$config"

version="$(jq -r .version dist/metadata.json 2>/dev/null || sed -nE 's/.*"version":"([^"]*)".*/\1/p' dist/metadata.json)"
# The manifest is checksummed from the repository; the release uploads it under this name.
cp terraform-registry-manifest.json "dist/terraform-provider-lifecycle_${version}_manifest.json"
echo "== artifacts"
find dist -maxdepth 1 -type f \( -name '*.zip' -o -name '*.tar.gz' -o -name '*SHA256SUMS' -o -name '*manifest.json' \) -printf '%f\n' | sort
echo "== SHA256SUMS"
cat dist/*_SHA256SUMS
(cd dist && sha256sum --check --strict ./*_SHA256SUMS)
echo "== versions stamped in the binaries"
host="$(go env GOOS)_$(go env GOARCH)"
provider="$(find dist -path "*provider_${host}*" -name 'terraform-provider-lifecycle_v*' -type f | head -1)"
sim="$(find dist -path "*lifecyclesim_${host}*" -name lifecyclesim -type f | head -1)"
"$provider" -version
"$sim" version
for out in "$("$provider" -version)" "$("$sim" version)"; do
	if [[ "$out" != *"$version"* ]]; then
		echo "binary reports '$out', want version $version" >&2
		exit 1
	fi
done
echo "release-check: ok ($version)"
