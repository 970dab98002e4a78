#!/usr/bin/env bash
# make release-check: validate both goreleaser configurations, build a snapshot of each for this
# machine's platform, and check what a publisher would upload:
#   - the provider's zips (one per platform of .goreleaser.yml, each holding only its binary),
#     the manifest (terraform-registry-manifest.json under the release's name);
#   - terraform-provider-lifecycle_<v>_SHA256SUMS lists exactly those zips and the manifest and
#     matches them, and its detached signature, made by goreleaser's signs section with a
#     throwaway GPG key, verifies (the registry checks both with the namespace's key);
#   - the simulator's archives and lifecyclesim_<v>_SHA256SUMS, from .goreleaser.lifecyclesim.yml;
#   - the snapshot installs as a user without Go installs it: terraform init -plugin-dir with the
#     host's zip in a filesystem mirror, then apply against the snapshot's own lifecyclesim;
#   - the checks refuse a wrong checksum file (a changed hash, a stray entry, a missing one).
# make release-snapshot (ALL_TARGETS=1) does the same for every platform of the configurations.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

goreleaser=(go tool -modfile=release/go.mod goreleaser)
all_targets=${ALL_TARGETS:-0}
provider_config=.goreleaser.yml
sim_config=.goreleaser.lifecyclesim.yml
host_os="$(go env GOOS)" host_arch="$(go env GOARCH)"

# The provider's platforms, as the registry lists them: .goreleaser.yml's goos × goarch minus its
# ignore list. Kept here by hand so that a change to either is a visible decision.
provider_platforms=(
	freebsd_386 freebsd_amd64 freebsd_arm freebsd_arm64
	linux_386 linux_amd64 linux_arm linux_arm64
	darwin_amd64 darwin_arm64
	windows_386 windows_amd64 windows_arm64
)
sim_platforms=(linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64 freebsd_amd64 freebsd_arm64)

tmp="$(mktemp -d)"
sim_pid=""
cleanup() {
	[[ -n "$sim_pid" ]] && kill "$sim_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "release-check: $*" >&2
	exit 1
}

"${goreleaser[@]}" check --config "$provider_config"
"${goreleaser[@]}" check --config "$sim_config"

if [[ "$all_targets" != 1 ]]; then
	# The same configurations, narrowed to this platform: every build's goos/goarch lists.
	for c in provider_config sim_config; do
		narrowed="$tmp/$(basename "${!c}")"
		sed -E -e "s/^(    goos: ).*/\1[$host_os]/" -e "s/^(    goarch: ).*/\1[\"$host_arch\"]/" "${!c}" >"$narrowed"
		printf -v "$c" %s "$narrowed"
	done
	provider_platforms=("${host_os}_${host_arch}")
	sim_platforms=("${host_os}_${host_arch}")
fi

# A throwaway signing key, so goreleaser's signs section runs as in a release.
export GNUPGHOME="$tmp/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --no-tty --passphrase '' --quick-generate-key 'release-check (throwaway) <release-check@invalid>' ed25519 sign 1d
GPG_FINGERPRINT="$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" {print $10; exit}')"
export GPG_FINGERPRINT

"${goreleaser[@]}" release --snapshot --clean --skip=publish --config "$provider_config"
"${goreleaser[@]}" release --snapshot --clean --skip=publish --config "$sim_config"

version="$(jq -r .version dist/metadata.json)"
[[ "$(jq -r .version dist-lifecyclesim/metadata.json)" == "$version" ]] || fail "the two configurations built different versions"
sums="terraform-provider-lifecycle_${version}_SHA256SUMS"
manifest="terraform-provider-lifecycle_${version}_manifest.json"
# goreleaser checksums the manifest from the repository; the release uploads it under this name.
cp terraform-registry-manifest.json "dist/$manifest"

echo "== provider artifacts ($version)"
want_files=("$manifest")
for p in "${provider_platforms[@]}"; do
	want_files+=("terraform-provider-lifecycle_${version}_${p}.zip")
done
got="$(cd dist && find . -maxdepth 1 -type f -name '*.zip' -printf '%f\n' | sort)"
want="$(printf '%s\n' "${want_files[@]}" | grep '\.zip$' | sort)"
[[ "$got" == "$want" ]] || fail "$(printf 'the provider zips are\n%s\nwant\n%s' "$got" "$want")"
echo "$got"
for p in "${provider_platforms[@]}"; do
	zip="dist/terraform-provider-lifecycle_${version}_${p}.zip"
	bin="terraform-provider-lifecycle_v${version}"
	[[ "$p" == windows_* ]] && bin+=".exe"
	entries="$(unzip -Z1 "$zip")"
	[[ "$entries" == "$bin" ]] || fail "$zip holds '$entries', want only $bin"
done
jq -e '.version == 1 and .metadata.protocol_versions == ["6.0"]' "dist/$manifest" >/dev/null ||
	fail "$manifest is not a version 1 manifest for protocol 6.0"

# check_sums FILE DIR NAME...: FILE lists exactly NAME... (sha256sum's format, no other line)
# and every hash matches the file in DIR.
check_sums() {
	local file=$1 dir=$2
	shift 2
	local listed want
	listed="$(awk '{print $2}' "$file" | sed 's/^\*//' | sort)"
	want="$(printf '%s\n' "$@" | sort)"
	if [[ "$listed" != "$want" ]]; then
		printf '%s lists\n%s\nwant exactly\n%s\n' "$file" "$listed" "$want" >&2
		return 1
	fi
	if grep -Evq '^[0-9a-f]{64}  [^ ]+$' "$file"; then
		echo "$file has a line that is not '<sha256>  <name>'" >&2
		return 1
	fi
	file="$(realpath "$file")"
	(cd "$dir" && sha256sum --check --strict --quiet "$file") || {
		echo "$file does not match the files in $dir" >&2
		return 1
	}
}

echo "== $sums"
cat "dist/$sums"
check_sums "dist/$sums" dist "${want_files[@]}" || fail "$sums is wrong"

echo "== its signature"
[[ -f "dist/$sums.sig" ]] || fail "no detached signature dist/$sums.sig"
gpg --batch --quiet --verify "dist/$sums.sig" "dist/$sums" || fail "dist/$sums.sig does not verify"

echo "== the checks refuse a wrong checksum file"
wrong="$tmp/wrong"
mkdir "$wrong"
while read -r name change; do
	cp "dist/$sums" "$wrong/sums"
	case "$change" in
	hash) # the first hex digit of the first line changed
		first="$(head -c1 "dist/$sums")"
		sed -i "1s/^./$([[ "$first" == 0 ]] && echo 1 || echo 0)/" "$wrong/sums" ;;
	stray) echo "$(printf '0%.0s' {1..64})  lifecyclesim_${version}_linux_amd64.tar.gz" >>"$wrong/sums" ;;
	missing) sed -i '$d' "$wrong/sums" ;;
	esac
	if check_sums "$wrong/sums" dist "${want_files[@]}" >/dev/null 2>&1; then
		fail "a checksum file with $name passed the checks"
	fi
	echo "refused: $name"
done <<-EOF2
	a-changed-hash hash
	a-lifecyclesim-entry stray
	a-missing-entry missing
EOF2
if gpg --batch --verify "dist/$sums.sig" "$wrong/sums" 2>/dev/null; then
	fail "the signature verified a checksum file it was not made for"
fi
echo "refused: the signature over another checksum file"

echo "== simulator artifacts"
sim_sums="lifecyclesim_${version}_SHA256SUMS"
sim_files=()
for p in "${sim_platforms[@]}"; do
	ext=tar.gz
	[[ "$p" == windows_* ]] && ext=zip
	sim_files+=("lifecyclesim_${version}_${p}.${ext}")
done
printf '%s\n' "${sim_files[@]}"
check_sums "dist-lifecyclesim/$sim_sums" dist-lifecyclesim "${sim_files[@]}" || fail "$sim_sums is wrong"

echo "== versions stamped in the binaries"
host="${host_os}_${host_arch}"
provider="$(find dist -path "*provider_${host}*" -name 'terraform-provider-lifecycle_v*' -type f | head -1)"
sim="$(find dist-lifecyclesim -path "*lifecyclesim_${host}*" -name lifecyclesim -type f | head -1)"
for out in "$("$provider" -version)" "$("$sim" version)"; do
	echo "$out"
	[[ "$out" == *"$version"* ]] || fail "a binary reports '$out', want version $version"
done

echo "== install without Go: terraform init -plugin-dir with the host's zip, apply against the snapshot's lifecyclesim"
mirror="$tmp/mirror/registry.terraform.io/lifecyclesim/lifecycle"
mkdir -p "$mirror" "$tmp/work"
cp "dist/terraform-provider-lifecycle_${version}_${host}.zip" "$mirror/"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$sim" --addr "127.0.0.1:$port" --db :memory: --time-scale 0.01 >"$tmp/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 50); do
	"$sim" healthcheck --addr "127.0.0.1:$port" >/dev/null 2>&1 && break
	sleep 0.1
done
"$sim" healthcheck --addr "127.0.0.1:$port" || { cat "$tmp/sim.log"; fail "the snapshot's lifecyclesim did not become ready"; }
cat >"$tmp/work/main.tf" <<EOF2
terraform {
  required_providers {
    lifecycle = {
      source  = "lifecyclesim/lifecycle"
      version = "$version"
    }
  }
}

provider "lifecycle" {
  endpoint = "http://127.0.0.1:$port"
}

resource "lifecycle_image" "img" {
  name = "from-the-release"
}
EOF2
: >"$tmp/empty.tfrc"
tf() {
	env -u TF_CLI_CONFIG_FILE -u TF_PLUGIN_CACHE_DIR TF_CLI_CONFIG_FILE="$tmp/empty.tfrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 \
		HTTPS_PROXY=http://127.0.0.1:1 HTTP_PROXY=http://127.0.0.1:1 terraform -chdir="$tmp/work" "$@"
}
tf init -input=false -no-color -plugin-dir="$tmp/mirror" >"$tmp/init.log" || { cat "$tmp/init.log"; fail "terraform init -plugin-dir failed"; }
grep -q "version     = \"$version\"" "$tmp/work/.terraform.lock.hcl" || fail "the lock file does not pin $version"
tf apply -input=false -no-color -auto-approve >"$tmp/apply.log" || { cat "$tmp/apply.log"; fail "terraform apply failed"; }
tf plan -input=false -no-color -detailed-exitcode >"$tmp/plan.log" || { cat "$tmp/plan.log"; fail "the plan after apply is not empty"; }
echo "terraform $(tf version -json | jq -r .terraform_version): init, apply and an empty plan with the snapshot's zip"

echo "release-check: ok ($version)"
