#!/usr/bin/env bash
# tests/release/notices_test.sh: checks release/notices.sh, the third-party
# notices of a release binary, on a built ceres-export and a fake prefix of
# C libraries (the names of release/libs.lock, stand-in licence texts):
#   - the notices name every Go module go version -m lists (with its
#     version), every library of the prefix's versions.txt, glibc and the Go
#     runtime, and state that the binary as a whole is GPL-2.0-or-later and
#     ceres-export's own source Apache-2.0; the same inputs give the same bytes;
#   - whatever is missing makes it exit non-zero with a message naming it: a
#     module with no licence file, a module whose licence it cannot name, a
#     library with no share/licenses/NAME, one with no libs.lock line, an
#     SVT-AV1 without its patent licence, a binary without FFmpeg, an FFmpeg
#     that is not GPL version 2 or later.
#
# Env: CERES_EXPORT the binary to use (default: go build ./cmd/ceres-export
#      into a scratch directory).
# Exit: 0 every check passed; 1 one failed (each failure is named).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
notices=$root/release/notices.sh
lock=$root/release/libs.lock
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# set -e would end the test silently; say which line stopped it.
trap 'echo "notices_test: line $LINENO: a command failed (exit $?)" >&2' ERR
failed=0

fail() {
	echo "FAIL: $*" >&2
	failed=1
}
pass() { echo "ok:   $*"; }

binary=${CERES_EXPORT:-}
if [ -z "$binary" ]; then
	echo "building ceres-export"
	go build -o "$work/ceres-export" ./cmd/ceres-export
	binary=$work/ceres-export
fi
[ -x "$binary" ] || { echo "$binary: no such executable" >&2; exit 1; }

# make_prefix DIR writes a fake prefix: every library of release/libs.lock
# with a made-up version and stand-in licence files carrying the phrases
# notices.sh names each licence by.
make_prefix() {
	local p=$1 name
	mkdir -p "$p/share/licenses"
	: >"$p/versions.txt"
	for name in $(grep -v -E '^[[:space:]]*(#|$)' "$lock" | awk '{print $1}'); do
		echo "$name 9.9.$((${#name}))-fake" >>"$p/versions.txt"
		mkdir -p "$p/share/licenses/$name"
	done
	local gpl="GNU GENERAL PUBLIC LICENSE
Version 2, June 1991 (stand-in text)"
	local bsd2="Redistribution and use in source and binary forms, with or without
modification, are permitted (stand-in two-clause text)."
	local bsd3="Redistribution and use in source and binary forms, with or without
modification, are permitted. Neither the name of the project nor the names of
its contributors may be used (stand-in three-clause text)."
	[ ! -d "$p/share/licenses/ffmpeg" ] || { echo "$gpl" >"$p/share/licenses/ffmpeg/COPYING.GPLv2"; echo "FFmpeg LICENSE.md stand-in" >"$p/share/licenses/ffmpeg/LICENSE.md"; }
	[ ! -d "$p/share/licenses/x264" ] || echo "$gpl" >"$p/share/licenses/x264/COPYING"
	[ ! -d "$p/share/licenses/dav1d" ] || echo "$bsd2" >"$p/share/licenses/dav1d/COPYING"
	[ ! -d "$p/share/licenses/libvpx" ] || { echo "$bsd3" >"$p/share/licenses/libvpx/LICENSE"; echo "Additional IP Rights Grant (Patents) stand-in" >"$p/share/licenses/libvpx/PATENTS"; }
	if [ -d "$p/share/licenses/svt-av1" ]; then
		printf 'The Clear BSD License\n%s\n' "$bsd3" >"$p/share/licenses/svt-av1/LICENSE.md"
		echo "Alliance for Open Media Patent License 1.0 (stand-in)" >"$p/share/licenses/svt-av1/PATENTS.md"
	fi
}

# expect_fail NAME WANT CMD... runs CMD, which must exit non-zero with WANT
# in what it writes to stderr.
expect_fail() {
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >/dev/null 2>"$work/err" || rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name: exited 0, want a failure naming \"$want\""
	elif ! grep -qF -- "$want" "$work/err"; then
		fail "$name: exit $rc, but stderr does not name \"$want\": $(cat "$work/err")"
	else
		pass "$name: exit $rc, $(head -1 "$work/err")"
	fi
}

make_prefix "$work/prefix"

# --- the notices of a complete input -----------------------------------------

if ! "$notices" "$binary" "$work/prefix" "$work/NOTICES" 2>"$work/err"; then
	fail "notices.sh on a complete input: $(cat "$work/err")"
	exit 1
fi
out=$work/NOTICES
has() { grep -qF -- "$1" "$out"; }
while IFS=$'\t' read -r _ kind path version _; do
	[ "$kind" = dep ] || continue
	grep -qE "^  $(sed 's/[.+~]/\\&/g' <<<"$path $version") " "$out" || fail "notices do not list Go module $path $version"
	has "==== Go module $path $version: " || fail "notices carry no licence text of Go module $path $version"
done < <(go version -m "$binary")
while read -r name version; do
	grep -qE "^  $name +$(sed 's/[.+~]/\\&/g' <<<"$version") " "$out" || fail "notices do not list C library $name $version"
	has "==== C library $name $version: " || fail "notices carry no licence text of C library $name"
	has "Debian source package $(awk -v n="$name" '$1 == n {print $2 " " $3; exit}' "$lock")" || fail "notices do not name $name's Debian source package"
done <"$work/prefix/versions.txt"
go_version=$(go version -m "$binary" | awk 'NR == 1 {print $2}')
for want in \
	"so the binary as a whole is distributed under the GNU General" \
	"(GPL-2.0-or-later)" \
	"The source code of ceres-export itself is licensed under the Apache License," \
	"LGPL-2.1-or-later" \
	"==== glibc " \
	"Go runtime and standard library $go_version" \
	"==== Go runtime and standard library $go_version: LICENSE ====" \
	"==== ceres-export: LICENSE ===="; do
	has "$want" || fail "notices lack \"$want\""
done
grep -qE '^  glibc +[0-9]' "$out" || fail "notices do not list glibc with its version"
"$notices" "$binary" "$work/prefix" "$work/NOTICES.again" 2>/dev/null
cmp -s "$out" "$work/NOTICES.again" || fail "two runs on the same inputs wrote different notices"
[ "$failed" = 1 ] || pass "complete input: every module, library, glibc, Go and the GPL statement named ($(wc -l <"$out") lines), same bytes twice"

# --- what is missing fails, naming it ----------------------------------------

# A module cache where every module of the binary is the real one but one,
# whose copy lacks its licence files (or has one no licence phrase names).
modcache=$(go env GOMODCACHE)
victim=$(go version -m "$binary" | awk -F'\t' '$2 == "dep" {print $3 "\t" $4}' | sort | sed -n 1p)
victim_path=${victim%%$'\t'*}
victim_version=${victim##*$'\t'}
fake_cache() {
	local c=$1 path version d
	while IFS=$'\t' read -r path version; do
		d=$(sed 's/[A-Z]/!\L&/g' <<<"$path@$version")
		mkdir -p "$(dirname "$c/$d")"
		if [ "$path" = "$victim_path" ]; then
			mkdir "$c/$d"
			echo "module $path" >"$c/$d/go.mod"
		else
			ln -s "$modcache/$d" "$c/$d"
		fi
	done < <(go version -m "$binary" | awk -F'\t' '$2 == "dep" {print $3 "\t" $4}')
}
fake_cache "$work/cache-nolicence"
expect_fail "module without a licence file" "module $victim_path@$victim_version: no LICENSE" \
	env GOMODCACHE="$work/cache-nolicence" GOPROXY=off GOFLAGS=-mod=mod "$notices" "$binary" "$work/prefix" "$work/out"
fake_cache "$work/cache-unknown"
victim_dir=$work/cache-unknown/$(sed 's/[A-Z]/!\L&/g' <<<"$victim_path@$victim_version")
echo "All rights reserved; ask us." >"$victim_dir/LICENSE"
expect_fail "module with a licence no phrase names" "module $victim_path@$victim_version: cannot tell the licence of LICENSE" \
	env GOMODCACHE="$work/cache-unknown" GOPROXY=off GOFLAGS=-mod=mod "$notices" "$binary" "$work/prefix" "$work/out"

first_lib=$(awk 'NR == 1 {print $1}' "$work/prefix/versions.txt")
make_prefix "$work/prefix-nodir"
rm -rf "$work/prefix-nodir/share/licenses/$first_lib"
expect_fail "library without share/licenses/NAME" "library $first_lib: $work/prefix-nodir/share/licenses/$first_lib is missing" \
	"$notices" "$binary" "$work/prefix-nodir" "$work/out"

make_prefix "$work/prefix-unpinned"
echo "libunpinned 1.0" >>"$work/prefix-unpinned/versions.txt"
mkdir -p "$work/prefix-unpinned/share/licenses/libunpinned"
echo "$work: MIT stand-in. Permission is hereby granted, free of charge, to any person obtaining a copy" >"$work/prefix-unpinned/share/licenses/libunpinned/LICENSE"
expect_fail "library without a libs.lock line" "library libunpinned (in $work/prefix-unpinned/versions.txt): no line in" \
	"$notices" "$binary" "$work/prefix-unpinned" "$work/out"

if grep -q '^svt-av1 ' "$lock"; then
	make_prefix "$work/prefix-nopatent"
	rm "$work/prefix-nopatent/share/licenses/svt-av1/PATENTS.md"
	expect_fail "SVT-AV1 without its patent licence" "library svt-av1: no AOM-Patent-1.0 text" \
		"$notices" "$binary" "$work/prefix-nopatent" "$work/out"
fi

# A Go binary that links no FFmpeg (every ceres-export build does).
mkdir -p "$work/noffmpeg"
printf 'package main\n\nfunc main() {}\n' >"$work/noffmpeg/main.go"
(cd "$work/noffmpeg" && GOFLAGS= CGO_ENABLED=0 go build -o "$work/noffmpeg/bin" main.go)
expect_fail "a binary without FFmpeg" "carries no FFmpeg" \
	"$notices" "$work/noffmpeg/bin" "$work/prefix" "$work/out"

# FFmpeg keeps its licence as a string ("libavcodec license: ...") in the
# binary that links it: the same binary with that string saying GPL
# version 3 (the same length, so the ELF file stays whole) stands for an
# FFmpeg configured with --enable-version3.
grep -aq 'libavcodec license: GPL version 2 or later' "$binary" || fail "$binary: no \"libavcodec license: GPL version 2 or later\" string"
python3 - "$binary" "$work/gpl3" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b.replace(b"libavcodec license: GPL version 2 or later", b"libavcodec license: GPL version 3 or later"))
PY
expect_fail "an FFmpeg configured GPL-3.0" 'its FFmpeg says its licence is "GPL version 3 or later"' \
	"$notices" "$work/gpl3" "$work/prefix" "$work/out"
if [ -e "$work/out" ]; then fail "a failed run left its OUT_FILE behind"; else pass "no failed run wrote its OUT_FILE"; fi

if [ "$failed" = 1 ]; then
	echo "notices_test: FAILED" >&2
	exit 1
fi
echo "notices_test: all passed"
