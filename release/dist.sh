#!/usr/bin/env bash
# release/dist.sh writes everything a release publishes into OUT_DIR, for each
# ARCH (amd64, arm64):
#
#   ceres-export-linux-ARCH           the fully static binary (build.sh)
#   ceres-export-linux-ARCH.gz        the same, gzipped (the download)
#   THIRD_PARTY_NOTICES-linux-ARCH    every library it carries, its licence
#                                     text and its source (notices.sh)
#   ceres_export-VERSION-…ARCH….whl   the pip wheel holding it (wheel.py)
#   ceres-export-image-linux-ARCH.tar the OCI image, with --image (image.sh)
#   ceres-export-VERSION-source.tar.gz the corresponding source of the
#                                     binaries, which the GPL asks for
#                                     (source.sh)
#   SHA256SUMS                        over every file above
#
# Usage: bash release/dist.sh [--image] [--out OUT_DIR] ARCH...
#   OUT_DIR defaults to dist; it is emptied first, so it never mixes two
#   builds. The libraries come from release/libs.sh (built once per pin,
#   cached outside the clone). An arm64 binary's version is read through
#   qemu-aarch64-static on another host.
set -euo pipefail

die() { echo "release/dist.sh: $*" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=dist
image=false
arches=()
while [ $# -gt 0 ]; do
	case $1 in
	--image) image=true; shift ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	amd64 | arm64) arches+=("$1"); shift ;;
	*) die "usage: dist.sh [--image] [--out OUT_DIR] ARCH... (ARCH amd64 or arm64; got '$1')" ;;
	esac
done
[ ${#arches[@]} -gt 0 ] || die "usage: dist.sh [--image] [--out OUT_DIR] ARCH... (no ARCH given)"

# The image's revision label: the binary's own when it records one, else
# the clone's commit (a build with -buildvcs=false, as CI's, records none).
if [ -z "${CERES_REVISION:-}" ] && rev=$(git -C "$here/.." rev-parse HEAD 2>/dev/null); then
	export CERES_REVISION=$rev
fi

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# run executes a binary of ARCH on this host: natively, or through qemu.
run() {
	local arch=$1
	shift
	if [ "$arch" = "$(go env GOHOSTARCH)" ]; then
		"$@"
	elif [ "$arch" = arm64 ]; then
		command -v qemu-aarch64-static >/dev/null || die "qemu-aarch64-static not found: needed to run the arm64 binary here (apt-get install qemu-user-static)"
		qemu-aarch64-static "$@"
	else
		die "cannot run a $arch binary on a $(go env GOHOSTARCH) host"
	fi
}

for arch in "${arches[@]}"; do
	start=$SECONDS
	bin=$(bash "$here/build.sh" "$arch" "$out" | tail -n 1)
	prefix=$(bash "$here/libs.sh" "$arch" | tail -n 1)
	notices=$out/THIRD_PARTY_NOTICES-linux-$arch
	bash "$here/notices.sh" "$bin" "$prefix" "$notices"
	read -r version linkage < <(run "$arch" "$bin" version --json | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["version"], r["linkage"])')
	[ "$linkage" = static ] || die "$bin says its linkage is '$linkage', not static"
	python3 "$here/wheel.py" "$bin" "$version" "$arch" "$out" --notices "$notices" >&2
	if $image; then
		bash "$here/image.sh" "$bin" "$notices" "$out/ceres-export-image-linux-$arch.tar" "$arch" >&2
	fi
	echo "release/dist.sh: linux-$arch $version in $((SECONDS - start)) s" >&2
done

bash "$here/source.sh" "$out" "$version" "${arches[@]}" >/dev/null

# One SHA256SUMS over everything (build.sh's covers only the binaries).
(
	cd "$out"
	find . -maxdepth 1 -type f ! -name SHA256SUMS ! -name '*.tmp' -printf '%f\n' | LC_ALL=C sort | xargs -r sha256sum > SHA256SUMS.tmp
	mv SHA256SUMS.tmp SHA256SUMS
)
ls -l "$out" >&2
