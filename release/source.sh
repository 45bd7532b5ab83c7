#!/usr/bin/env bash
# release/source.sh writes the corresponding source of a release:
# OUT_DIR/ceres-export-VERSION-source.tar.gz. The release binaries link
# libx264 and an FFmpeg built with --enable-gpl, so they are distributed
# under the GPL, which asks that the complete source travel with them; glibc
# (LGPL) is linked statically, which asks that a user can relink. The
# archive holds, under ceres-export-VERSION/:
#
#   the repository's tracked files, as they are in this tree (what the
#     binaries were built from; the build scripts among them)
#   vendor/                      every Go module the build uses (go mod vendor)
#   debian-sources/PKG_VERSION/  each Debian source package release/libs.lock
#                                pins, every file checked against its SHA-256
#   debian-sources/glibc/        the glibc source packages the static libc.a
#                                of each ARCH's binary was built from
#   SOURCE.md                    how to rebuild the binaries from this alone
#
# Deterministic: the same tree and pins give the same bytes (sorted names,
# one fixed time, owner 0, gzip -n).
#
# Usage: bash release/source.sh OUT_DIR VERSION ARCH...
# Environment: CERES_CACHE (see libs.sh), GO (default go).
set -euo pipefail

die() { echo "release/source.sh: $*" >&2; exit 1; }

out=${1:-}
version=${2:-}
shift 2 || true
arches=("$@")
[ -n "$out" ] && [ -n "$version" ] && [ ${#arches[@]} -gt 0 ] || die "usage: source.sh OUT_DIR VERSION ARCH... (the architectures whose binaries it is the source of)"
for arch in "${arches[@]}"; do
	case $arch in amd64 | arm64) ;; *) die "ARCH amd64 or arm64, not '$arch'" ;; esac
done
GO=${GO:-go}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cache=${CERES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export}
lock=${CERES_LIBS_LOCK:-$here/libs.lock}
command -v git >/dev/null || die "git not found: the archive lists the repository's tracked files"
command -v apt-get >/dev/null || die "apt-get not found: glibc's source package is fetched with it"
command -v dpkg-query >/dev/null || die "dpkg-query not found: it names the glibc the binaries link"

mkdir -p "$out"
out=$(cd "$out" && pwd)
name=ceres-export-$version
archive=$out/$name-source.tar.gz
work=$(mktemp -d "$out/.source.XXXXXX")
trap 'rm -rf "$work" "$archive.tmp"' EXIT
top=$work/$name
mkdir -p "$top"

# The tracked files as they are in this tree: what build.sh compiled.
git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$top" --)

# The Go modules, so that the archive builds with no module proxy.
(cd "$top" && "$GO" mod vendor) >&2

# The pinned C libraries' source packages: sources.sh fetches (or finds)
# and verifies them; its download directory is copied, and checked again
# here against the lock, so that what ships is what was pinned.
bash "$here/sources.sh" >/dev/null
while read -r lname pkg ver dist files; do
	plain=${ver#*:}
	src=$cache/src/dl/${pkg}_$plain
	dst=$top/debian-sources/${pkg}_$plain
	mkdir -p "$dst"
	for pair in $files; do
		file=${pair%%=*} want=${pair#*=}
		got=$(sha256sum "$src/$file" | cut -d' ' -f1) || die "$lname: $src/$file: missing"
		[ "$got" = "$want" ] || die "$lname: $src/$file: sha256 $got, libs.lock says $want"
		cp "$src/$file" "$dst/$file"
	done
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$lock")

# glibc: the static libc.a each binary links is the build host's (amd64:
# libc6-dev; arm64: libc6-dev-arm64-cross, built from glibc's source of
# the version its own carries before "cross"), so its source is that glibc
# source package, fetched through the private apt configuration
# sources.sh made, and cached like the pinned ones.
apt_opts=(-o "Dir::Etc::SourceList=$cache/src/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$cache/src/apt/lists" -o "Dir::Cache=$cache/src/apt/cache" -o APT::Get::Only-Source=true)
glibc_versions=() glibc_missing=()
for arch in "${arches[@]}"; do
	case $arch in
	amd64) v=$(dpkg-query -W -f '${source:Version}' libc6-dev) || die "libc6-dev not installed (the libc.a of the amd64 binary)" ;;
	arm64) v=$(dpkg-query -W -f '${Version}' libc6-dev-arm64-cross) || die "libc6-dev-arm64-cross not installed (the libc.a of the arm64 binary)"
		v=${v%cross*} ;;
	esac
	glibc_versions+=("$v")
done
mkdir -p "$top/debian-sources/glibc"
for v in $(printf '%s\n' "${glibc_versions[@]}" | sort -u); do
	dl=$cache/src/dl/glibc_$v
	if [ ! -f "$dl/.complete" ]; then
		rm -rf "$dl"
		mkdir -p "$dl"
		if (cd "$dl" && apt-get "${apt_opts[@]}" source --download-only "glibc=$v" >&2); then
			touch "$dl/.complete"
		else
			# An archive may no longer serve an older Debian revision
			# (the cross libc lags the native one): say so in SOURCE.md
			# rather than fail the release; the upstream tarball is
			# shared with the other revision.
			echo "release/source.sh: glibc=$v: not served by the Debian archive configured here; SOURCE.md names it" >&2
			glibc_missing+=("$v")
			rm -rf "$dl"
			continue
		fi
	fi
	# One directory for every version: they share the upstream tarball.
	cp "$dl"/glibc_* "$top/debian-sources/glibc/"
done

cat >"$top/SOURCE.md" <<EOF
# ceres-export $version: corresponding source

This archive is the complete source of the ceres-export $version release
binaries (linux-amd64 and linux-arm64): the repository, every Go module
(\`vendor/\`), and the Debian source package of every C library they link
(\`debian-sources/\`: the ones release/libs.lock pins, with their SHA-256
there, and in \`debian-sources/glibc/\` glibc $(printf '%s ' "${glibc_versions[@]}" | sed 's/ $//'), whose static
libc.a the binaries link).

To rebuild them with no network but a Debian 12 machine's packages
(\`make release-deps\`, and \`make deps\` for the host's build tools):

    mkdir -p ~/.cache/ceres-export/src/dl
    cp -r debian-sources/* ~/.cache/ceres-export/src/dl/
    make release

release/sources.sh finds each pinned package there, checks it against the
lock and fetches nothing; Go builds from \`vendor/\`. docs/release.md says
what \`make release\` does.
EOF

for v in "${glibc_missing[@]}"; do
	cat >>"$top/SOURCE.md" <<EOF

Not included: Debian's glibc $v source package (its upstream tarball is
included; its Debian changes, glibc_$v.debian.tar.xz, were not served by the
archive this release was built against). Debian's snapshot archive keeps
every revision it published: \`apt-get source glibc=$v\` against it.
EOF
done

# Deterministic tar: sorted names, one time, no owner names.
(cd "$work" && find "$name" -print0 | LC_ALL=C sort -z |
	tar --null --no-recursion -T - --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u+rwX,go+rX,go-w -cf - |
	gzip -n -9 >"$archive.tmp")
mv "$archive.tmp" "$archive"
echo "$archive"
