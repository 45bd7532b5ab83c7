#!/usr/bin/env bash
# tests/release/source_test.sh ARCHIVE RELEASE_BINARY: the corresponding
# source a release ships (release/source.sh) is complete: every file
# release/libs.lock pins is in it with its SHA-256, glibc's source is in it
# or named in SOURCE.md, and the Go program builds from it alone (vendor/,
# no module proxy) against the pinned libraries into a binary whose
# `version` says what the release binary's says.
set -euo pipefail

die() { echo "source_test: $*" >&2; exit 1; }
archive=${1:?usage: source_test.sh ARCHIVE RELEASE_BINARY}
release_bin=${2:?usage: source_test.sh ARCHIVE RELEASE_BINARY}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/ceres-source-test.XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

tar -xzf "$archive" -C "$work"
top=$(find "$work" -mindepth 1 -maxdepth 1 -type d)
[ "$(find "$work" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ] || die "$archive: more than one top-level entry"

fails=0
while read -r name pkg ver dist files; do
	plain=${ver#*:}
	for pair in $files; do
		file=${pair%%=*} want=${pair#*=}
		f=$top/debian-sources/${pkg}_$plain/$file
		if [ ! -f "$f" ]; then
			echo "source_test: $archive: $name: debian-sources/${pkg}_$plain/$file missing" >&2; fails=1; continue
		fi
		got=$(sha256sum "$f" | cut -d' ' -f1)
		[ "$got" = "$want" ] || { echo "source_test: $archive: $f: sha256 $got, libs.lock says $want" >&2; fails=1; }
	done
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/release/libs.lock")

# glibc: each version the binaries' libc.a came from is there, or named.
ls "$top"/debian-sources/glibc/glibc_*.orig.tar.* >/dev/null 2>&1 || { echo "source_test: $archive: no glibc upstream tarball" >&2; fails=1; }
for dsc in "$top"/debian-sources/glibc/*.dsc; do
	[ -f "$dsc" ] || { echo "source_test: $archive: no glibc source package" >&2; fails=1; }
done
[ -f "$top/SOURCE.md" ] || { echo "source_test: $archive: SOURCE.md missing" >&2; fails=1; }
[ -f "$top/vendor/modules.txt" ] || { echo "source_test: $archive: vendor/modules.txt missing" >&2; fails=1; }
[ "$fails" -eq 0 ] || die "$archive is not the complete source"

# The Go program from the archive alone: no proxy, no module cache.
eval "$(make -s -C "$root" env)"
(cd "$top" && GOPROXY=off GOFLAGS=-mod=vendor GOMODCACHE="$work/empty-modcache" CGO_ENABLED=1 \
	go build -trimpath -o "$work/ceres-export" ./cmd/ceres-export) || die "$archive: the Go program does not build from the archive alone"
want=$("$release_bin" version --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["version"], r["ffmpeg"], json.dumps(r["libraries"], sort_keys=True))')
got=$("$work/ceres-export" version --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["version"], r["ffmpeg"], json.dumps(r["libraries"], sort_keys=True))')
[ "$got" = "$want" ] || die "built from $archive: version '$got', the release binary says '$want'"
echo "source_test: $archive: complete; the program builds from it alone ($got)"
