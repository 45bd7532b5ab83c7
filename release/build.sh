#!/usr/bin/env bash
# release/build.sh: build the fully static release binary of ceres-export for
# ARCH (amd64 | arm64) against the static C libraries release/libs.sh builds
# (or finds cached): OUT_DIR/ceres-export-linux-ARCH, its deterministic gzip
# (ceres-export-linux-ARCH.gz) and OUT_DIR/SHA256SUMS, regenerated over every
# file in OUT_DIR. Fails if the binary is not static (it must run on any
# Linux of its architecture, with no FFmpeg or libc of its own).
#
# Usage: release/build.sh ARCH [OUT_DIR]   (OUT_DIR default: dist, relative
#   to the current directory). -buildvcs and other flags follow the caller's
#   GOFLAGS; the binary is not stripped.
# Environment: CERES_CACHE (see libs.sh), GO (default go).
set -euo pipefail

die() { echo "build.sh: $*" >&2; exit 1; }

arch=${1:-}
out=${2:-dist}
case $arch in
amd64) cc=gcc machine='X86-64' ;;
arm64) cc=aarch64-linux-gnu-gcc machine='AArch64' ;;
*) die "usage: build.sh ARCH [OUT_DIR], ARCH amd64 or arm64 (got '${arch}')" ;;
esac
command -v "$cc" > /dev/null || die "$cc not found (the C compiler cgo links $arch with)"
command -v readelf > /dev/null || die "readelf not found (binutils): needed to check the binary is static"
GO=${GO:-go}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

prefix=$("$here/libs.sh" "$arch" | tail -n 1)
[ -f "$prefix/lib/pkgconfig/libavcodec.pc" ] || die "libs.sh gave prefix '$prefix', which has no lib/pkgconfig/libavcodec.pc"

mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$out/ceres-export-linux-$arch
# A failed or rejected build leaves nothing behind in OUT_DIR.
trap 'rm -f "$bin.tmp" "$bin.gz.tmp" "$out/SHA256SUMS.tmp"' EXIT

# Only the prefix's .pc files: never the machine's own FFmpeg.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
unset PKG_CONFIG_SYSROOT_DIR
export CGO_ENABLED=1 GOOS=linux GOARCH=$arch CC=$cc
echo "build.sh: building $bin against $prefix" >&2
# netgo and osusergo: the pure-Go resolver and user lookup, so that the
# static binary never needs glibc's NSS modules at run time.
(cd "$root" && "$GO" build -trimpath -tags netgo,osusergo -ldflags '-extldflags "-static"' \
	-o "$bin.tmp" ./cmd/ceres-export) || die "go build of ./cmd/ceres-export for linux/$arch failed"

# Static: no program interpreter and no shared library needed.
headers=$(readelf -lhdW "$bin.tmp") || die "$bin.tmp: not an ELF file readelf can read"
if grep -q 'Requesting program interpreter\|[[:space:]]INTERP[[:space:]]' <<< "$headers"; then
	die "$bin.tmp is not static: it has a program interpreter (PT_INTERP): $(grep -o 'Requesting program interpreter: [^]]*' <<< "$headers")"
fi
if grep -q '(NEEDED)' <<< "$headers"; then
	die "$bin.tmp is not static: it needs shared libraries: $(grep '(NEEDED)' <<< "$headers" | grep -o '\[.*\]' | tr '\n' ' ')"
fi
grep -q "Machine:.*$machine" <<< "$headers" || die "$bin.tmp is not a $machine binary: $(grep 'Machine:' <<< "$headers")"
mv "$bin.tmp" "$bin"

gzip -n -9 -c "$bin" > "$bin.gz.tmp"
mv "$bin.gz.tmp" "$bin.gz"

# SHA256SUMS over whatever OUT_DIR holds (both architectures' files when
# both were built into it).
(
	cd "$out"
	find . -maxdepth 1 -type f ! -name SHA256SUMS ! -name '*.tmp' -printf '%f\n' | LC_ALL=C sort |
		xargs -r sha256sum > SHA256SUMS.tmp
	mv SHA256SUMS.tmp SHA256SUMS
)
echo "build.sh: $bin ($(stat -c %s "$bin") bytes, static), $bin.gz ($(stat -c %s "$bin.gz") bytes), $out/SHA256SUMS" >&2
echo "$bin"
