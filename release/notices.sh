#!/usr/bin/env bash
# release/notices.sh: writes the third-party notices that ship beside a
# release binary of ceres-export (in its wheel and in its image): every
# library the binary carries, with its version and licence, then the full
# text of every licence.
#
#   release/notices.sh BINARY PREFIX OUT_FILE
#
# BINARY  the static release binary (go version -m lists the Go modules
#         linked into it; its ELF header says which architecture's C library
#         it carries).
# PREFIX  the prefix of the pinned static C libraries it was linked against:
#         PREFIX/versions.txt (one line per library: NAME UPSTREAM-VERSION)
#         and PREFIX/share/licenses/NAME/ (that library's licence files).
#         Every NAME must also be in release/libs.lock, which says from which
#         Debian source package (name and version) it was built.
# OUT_FILE the notices file to write (written whole, or not at all).
#
# The output is deterministic (sorted, no dates): the same inputs give the
# same bytes. Anything missing fails loudly, naming what is missing: a Go
# module with no licence file in the module cache, a library of versions.txt
# with no share/licenses/NAME or no libs.lock line, a licence this script
# cannot name, an FFmpeg inside BINARY that is not GPL-2.0-or-later.
set -euo pipefail

die() {
	echo "notices.sh: $*" >&2
	exit 1
}

[ $# -eq 3 ] || die "usage: release/notices.sh BINARY PREFIX OUT_FILE"
binary=$1
prefix=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
lock=$here/libs.lock

[ -f "$binary" ] || die "$binary: no such binary"
[ -d "$prefix" ] || die "$prefix: no such prefix directory"
[ -f "$prefix/versions.txt" ] || die "$prefix/versions.txt: missing (the prefix's list of libraries: NAME UPSTREAM-VERSION per line)"
[ -f "$lock" ] || die "$lock: missing (the pinned Debian source packages of the C libraries)"
[ -f "$root/LICENSE" ] || die "$root/LICENSE: missing (ceres-export's own licence, Apache-2.0)"
command -v go >/dev/null || die "go: not found (go version -m lists the binary's modules)"
export LC_ALL=C

# classify FILE prints the SPDX identifiers of the licence texts FILE holds,
# one a line, from phrases each licence's text carries. A file that names
# none is an error for the caller: a new licence needs a human look before a
# release ships it.
classify() {
	local t
	t=$(tr -s '[:space:]' ' ' <"$1" | tr '[:upper:]' '[:lower:]')
	has() { [[ $t == *"$1"* ]]; }
	if has "apache license" && has "version 2.0"; then echo Apache-2.0; fi
	# "of this software": the OFL grants its permission over "the Font Software".
	if has "permission is hereby granted, free of charge, to any person obtaining a copy of this software"; then echo MIT; fi
	if has "redistribution and use in source and binary forms"; then
		if has "the clear bsd license" || has "no express or implied licenses to any party's patent rights"; then
			echo BSD-3-Clause-Clear
		elif has "neither the name" || has "names of its contributors may" || has "name of the copyright holder nor" ||
			has "may be used to endorse or promote products"; then
			echo BSD-3-Clause
		else
			echo BSD-2-Clause
		fi
	fi
	if has "permission to use, copy, modify, and/or distribute this software for any purpose"; then echo ISC; fi
	if has "mozilla public license version 2.0" || has "mozilla public license, version 2.0"; then echo MPL-2.0; fi
	if has "creative commons attribution 4.0 international"; then echo CC-BY-4.0; fi
	if has "sil open font license" && has "version 1.1"; then echo OFL-1.1; fi
	if has "the freetype project license"; then echo FTL; fi
	if has "gnu lesser general public license" && has "version 2.1"; then echo LGPL-2.1; fi
	if has "gnu general public license" && has "version 2, june 1991"; then echo GPL-2.0; fi
	if has "gnu general public license" && has "version 3, 29 june 2007"; then echo GPL-3.0; fi
	if has "this is free and unencumbered software released into the public domain"; then echo Unlicense; fi
	# Patent grants ride beside a licence: licence_of names them after it.
	if has "alliance for open media patent license 1.0"; then echo patent:AOM-Patent-1.0; fi
	if has "additional ip rights grant (patents)"; then echo patent:Google-Patent-Grant; fi
	return 0
}

# Licences of Go modules whose licence files a phrase match would misname:
# a choice between licences reads as both.
module_licence_override() {
	case $1 in
	github.com/golang/freetype) echo "FTL OR GPL-2.0-or-later" ;;
	*) return 1 ;;
	esac
}

# The pinned C libraries' licences as built (release/libs.sh), by their
# libs.lock name, and a phrase their licence files must carry: FFmpeg is
# LGPL-2.1-or-later code configured with --enable-gpl, which makes it
# GPL-2.0-or-later; SVT-AV1 and libvpx come with patent grants that must
# ship with them.
c_licence() {
	case $1 in
	ffmpeg) echo "GPL-2.0-or-later (LGPL-2.1-or-later code built with --enable-gpl)" ;;
	x264) echo "GPL-2.0-or-later" ;;
	svt-av1) echo "BSD-3-Clause-Clear, with the Alliance for Open Media Patent License 1.0" ;;
	dav1d) echo "BSD-2-Clause" ;;
	libvpx) echo "BSD-3-Clause, with Google's additional IP rights grant (PATENTS)" ;;
	*) return 1 ;;
	esac
}
c_required_licences() {
	case $1 in
	ffmpeg | x264) echo GPL-2.0 ;;
	svt-av1) echo BSD-3-Clause-Clear patent:AOM-Patent-1.0 ;;
	dav1d) echo BSD-2-Clause ;;
	libvpx) echo BSD-3-Clause patent:Google-Patent-Grant ;;
	esac
}

# licence_files DIR prints DIR's licence files, sorted: LICENSE*, LICENCE*,
# COPYING*, NOTICE*, PATENTS* in any case, and the files of a LICENSES
# directory (where a module keeps the texts its LICENSE names).
licence_files() {
	local d=$1 f
	while IFS= read -r f; do
		if [ -f "$d/$f" ]; then
			echo "$f"
		elif [ -d "$d/$f" ]; then
			find "$d/$f" -maxdepth 1 -type f -printf "$f/%f\n"
		fi
	done < <(find "$d" -mindepth 1 -maxdepth 1 \( -iname 'licen[cs]e*' -o -iname 'copying*' -o -iname 'notice*' -o -iname 'patents*' \) ! -iname '*.go' -printf '%f\n') | sort
}

# licence_of DIR FILES... names the licence of the texts FILES (the SPDX ids
# they hold, joined by AND, then the patent grants that come with them); it
# fails naming a file whose licence it cannot tell (NOTICE files carry
# attributions, not licences, and are not asked).
licence_of() {
	local d=$1 f ids c
	shift
	ids=$(for f in "$@"; do
		case ${f##*/} in [Nn][Oo][Tt][Ii][Cc][Ee]*) continue ;; esac
		c=$(classify "$d/$f")
		[ -n "$c" ] || { echo "?$f"; continue; }
		echo "$c"
	done | sort -u)
	if grep -q '^?' <<<"$ids"; then
		sed -n '/^?/{s/^?//p;q}' <<<"$ids"
		return 1
	fi
	local licences patents
	licences=$({ grep -v '^patent:' <<<"$ids" || true; } | paste -sd' ' | sed 's/ / AND /g')
	patents=$({ grep '^patent:' <<<"$ids" || true; } | sed -e "s/^patent:AOM-Patent-1.0$/the Alliance for Open Media Patent License 1.0/" \
		-e "s/^patent:Google-Patent-Grant$/Google's additional IP rights grant (PATENTS)/" | paste -sd'|' | sed 's/|/ and /g')
	[ -n "$licences" ] || return 1
	echo "$licences${patents:+, with $patents}"
}

# align pads tab-separated columns on stdin to their widest cell, each row
# indented by two spaces.
align() {
	awk -F'\t' '{ rows[NR] = $0; for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i) }
		END { for (r = 1; r <= NR; r++) { n = split(rows[r], c, "\t"); line = " "
			for (i = 1; i <= n; i++) line = line " " (i < n ? sprintf("%-" w[i] "s", c[i]) : c[i]); print line } }'
}

# escape a module path or version as the module cache spells it: an upper
# case letter is "!" and the letter in lower case.
escape() { sed 's/[A-Z]/!\L&/g' <<<"$1"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
modcache=$(go env GOMODCACHE)

# --- the binary: its architecture, its Go modules, its FFmpeg -------------

[ "$(head -c4 "$binary" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || die "$binary: not an ELF binary"
case $(od -An -tu2 -j18 -N2 "$binary" | tr -d ' ') in
62) arch=amd64 glibc_pkg=libc6 glibc_copyright=/usr/share/doc/libc6/copyright ;;
183) arch=arm64 glibc_pkg=libc6-arm64-cross glibc_copyright=/usr/share/doc/libc6-arm64-cross/copyright ;;
*) die "$binary: an ELF machine this script does not know (amd64 and arm64 are released)" ;;
esac

ffmpeg_licence=$({ grep -a -o 'libavcodec license: [A-Za-z0-9 .]*' "$binary" || true; } | sed -n '1s/^libavcodec license: //p')
if [ -z "$ffmpeg_licence" ]; then
	# Every build links the pinned FFmpeg statically: one without it is not
	# a ceres-export these notices describe.
	die "$binary: carries no FFmpeg (no \"libavcodec license:\" string): these notices describe a binary that links the pinned libraries"
elif [ "$ffmpeg_licence" != "GPL version 2 or later" ]; then
	die "$binary: its FFmpeg says its licence is \"$ffmpeg_licence\", not \"GPL version 2 or later\" (--enable-gpl without --enable-version3 or --enable-nonfree): the GPL-2.0-or-later statement would be wrong"
fi

go version -m "$binary" >"$tmp/buildinfo" 2>"$tmp/buildinfo.err" ||
	die "$binary: go version -m cannot read its build information: $(cat "$tmp/buildinfo.err")"
go_version=$(head -1 "$tmp/buildinfo" | awk '{print $2}')
main_version=$(awk -F'\t' '$2 == "mod" {print $4}' "$tmp/buildinfo")
# One line per linked module: PATH VERSION [=> REPLACEMENT-PATH REPLACEMENT-VERSION].
awk -F'\t' '
	$2 == "dep" { if (m != "") print m; m = $3 " " $4 }
	$2 == "=>" { m = m " => " $3 " " $4 }
	END { if (m != "") print m }' "$tmp/buildinfo" | sort >"$tmp/modules"
[ -s "$tmp/modules" ] || die "$binary: go version -m lists no modules"

# --- Go modules ------------------------------------------------------------

: >"$tmp/go-table"
: >"$tmp/go-texts"
while read -r path version arrow rpath rversion; do
	src=$path srcv=$version
	if [ "${arrow:-}" = "=>" ]; then
		src=$rpath srcv=${rversion:-}
		[ -n "$srcv" ] && [ "$srcv" != "(devel)" ] ||
			die "module $path: replaced by the local directory $rpath; its licence cannot be read from the module cache"
	fi
	dir=$modcache/$(escape "$src")@$(escape "$srcv")
	if [ ! -d "$dir" ]; then
		go mod download "$src@$srcv" >/dev/null 2>&1 || true
	fi
	[ -d "$dir" ] || die "module $src@$srcv: not in the module cache ($dir) and go mod download could not fetch it"
	mapfile -t files < <(licence_files "$dir")
	[ ${#files[@]} -gt 0 ] || die "module $src@$srcv: no LICENSE*, COPYING* or NOTICE* file in $dir"
	if ! licence=$(module_licence_override "$path"); then
		licence=$(licence_of "$dir" "${files[@]}") ||
			die "module $src@$srcv: cannot tell the licence of ${licence:-its licence files} in $dir (add its phrase to classify in release/notices.sh)"
	fi
	label="$path $version"
	[ "$src@$srcv" = "$path@$version" ] || label="$label (replaced by $src $srcv)"
	printf '%s\t%s\n' "$label" "$licence" >>"$tmp/go-table"
	for f in "${files[@]}"; do
		{
			printf '\n==== Go module %s %s: %s ====\n\n' "$src" "$srcv" "$f"
			cat "$dir/$f"
			[ -z "$(tail -c1 "$dir/$f")" ] || echo
		} >>"$tmp/go-texts"
	done
done <"$tmp/modules"

# --- C libraries from the prefix -------------------------------------------

grep -v -E '^[[:space:]]*(#|$)' "$prefix/versions.txt" | sort >"$tmp/versions"
[ -s "$tmp/versions" ] || die "$prefix/versions.txt: lists no library"
: >"$tmp/c-table"
: >"$tmp/c-sources"
: >"$tmp/c-texts"
while read -r name upstream rest; do
	[ -n "${upstream:-}" ] || die "$prefix/versions.txt: library $name has no version (expected NAME UPSTREAM-VERSION)"
	read -r _ srcpkg srcver dist _ < <(awk -v n="$name" '$1 == n {print; exit}' "$lock") ||
		die "library $name (in $prefix/versions.txt): no line in $lock says from which Debian source package it is built"
	ldir=$prefix/share/licenses/$name
	[ -d "$ldir" ] || die "library $name: $ldir is missing (its licence files)"
	mapfile -t files < <(find "$ldir" -type f -printf '%P\n' | sort)
	[ ${#files[@]} -gt 0 ] || die "library $name: $ldir holds no licence file"
	found=$(for f in "${files[@]}"; do classify "$ldir/$f"; done | sort -u)
	if licence=$(c_licence "$name"); then
		for want in $(c_required_licences "$name"); do
			grep -qx -- "$want" <<<"$found" || die "library $name: no ${want#patent:} text among its licence files in $ldir"
		done
	else
		licence=$(licence_of "$ldir" "${files[@]}") ||
			die "library $name: cannot tell the licence of ${licence:-its licence files} in $ldir (name it in c_licence in release/notices.sh)"
	fi
	printf '%s\t%s\t%s\n' "$name" "$upstream" "$licence" >>"$tmp/c-table"
	printf '%s\tDebian source package %s %s (%s)\n' "$name" "$srcpkg" "$srcver" "$dist" >>"$tmp/c-sources"
	for f in "${files[@]}"; do
		{
			printf '\n==== C library %s %s: %s ====\n\n' "$name" "$upstream" "$f"
			cat "$ldir/$f"
			[ -z "$(tail -c1 "$ldir/$f")" ] || echo
		} >>"$tmp/c-texts"
	done
done <"$tmp/versions"

# --- the C library and the Go runtime ---------------------------------------

[ -f "$glibc_copyright" ] || die "$glibc_copyright: missing (glibc's copyright for $arch; install $glibc_pkg)"
lgpl=/usr/share/common-licenses/LGPL-2.1
[ -f "$lgpl" ] || die "$lgpl: missing (the LGPL-2.1 text glibc's copyright refers to)"
glibc_pkgver=$(dpkg-query -W -f '${Version}' "$glibc_pkg" 2>/dev/null) ||
	die "$glibc_pkg: not installed (the glibc the $arch binary is linked with)"
glibc_src=$(dpkg-query -W -f '${source:Package} ${source:Version}' "$glibc_pkg")
glibc_upstream=${glibc_pkgver#*:}
glibc_upstream=${glibc_upstream%%-*}
goroot=$(go env GOROOT)
[ -f "$goroot/LICENSE" ] || die "$goroot/LICENSE: missing (the Go runtime's licence)"

# --- the notices -----------------------------------------------------------

{
	cat <<EOF
THIRD-PARTY NOTICES: ceres-export ${main_version:-(devel)} for linux/$arch

This binary links libx264 (GPL-2.0-or-later) and FFmpeg built with
--enable-gpl, so the binary as a whole is distributed under the GNU General
Public License, version 2 or (at your option) any later version
(GPL-2.0-or-later); the text of that licence is below, among FFmpeg's and
x264's licence files.

The source code of ceres-export itself is licensed under the Apache License,
Version 2.0 (Apache-2.0); its text is below.

Corresponding source: ceres-export-${main_version:-VERSION}-source.tar.gz, published
beside this binary, holds the complete source it is built from (the
repository, every Go module, and the Debian source packages below, with
the instructions to rebuild). Each C library below is built from a pinned
Debian source package, which apt-get source NAME=VERSION also fetches from
the Debian archive:

$({ cat "$tmp/c-sources"; printf 'glibc\tDebian source package %s (the %s package %s)\n' "$glibc_src" "$glibc_pkg" "$glibc_pkgver"; } | align)

Each Go module is fetched at the version listed with
go mod download MODULE@VERSION; the Go runtime and standard library are
those of the Go release $go_version.

LIBRARIES IN THIS BINARY

ceres-export
$(printf 'github.com/ceres-robotics/ceres-export %s\tApache-2.0\n' "${main_version:-(devel)}" | align)

Go modules
$(align <"$tmp/go-table")

C libraries (linked statically)
$(align <"$tmp/c-table")

C library and runtime (linked statically)
$(printf 'glibc\t%s\tLGPL-2.1-or-later\nGo runtime and standard library\t%s\tBSD-3-Clause\n' "$glibc_upstream" "$go_version" | align)

LICENCE TEXTS

==== ceres-export: LICENSE ====

EOF
	cat "$root/LICENSE"
	cat "$tmp/go-texts" "$tmp/c-texts"
	printf '\n==== glibc %s: copyright (%s) ====\n\n' "$glibc_upstream" "$glibc_pkg"
	cat "$glibc_copyright"
	printf '\n==== glibc %s: LGPL-2.1 ====\n\n' "$glibc_upstream"
	cat "$lgpl"
	printf '\n==== Go runtime and standard library %s: LICENSE ====\n\n' "$go_version"
	cat "$goroot/LICENSE"
} >"$tmp/notices"

mkdir -p "$(dirname "$out")"
cp "$tmp/notices" "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "notices.sh: wrote $out ($(wc -l <"$out") lines; $(wc -l <"$tmp/modules") Go modules, $(wc -l <"$tmp/versions") C libraries, glibc, Go $go_version)" >&2
