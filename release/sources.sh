#!/usr/bin/env bash
# release/sources.sh: fetch the Debian source packages pinned in release/libs.lock
# (the C libraries the static ceres-export release binary links), verify every
# fetched file's SHA-256 against the lock, and unpack each with dpkg-source -x
# (Debian's patches applied) into $CERES_CACHE/src/<name>-<version>/.
#
# apt runs with a private configuration under $CERES_CACHE/src/apt: its own
# sources list, lists and cache, so the system's apt state is never touched.
# The deb-src lines are derived at run time from the machine's own apt sources
# (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list and *.sources): the
# same archive URIs, components and keys, for the Debian releases the pins
# name (the lock's dist column) with each suffix the machine uses (-updates,
# -security). No archive host is written in the repository.
#
# Idempotent: a source whose unpacked tree carries a stamp equal to its lock
# line is neither fetched nor unpacked again (no network is used then).
#
# Usage: release/sources.sh
#   On success stdout carries one line per library: NAME<TAB>SOURCE_TREE.
#   A lock entry with no files listed is fetched and the script fails,
#   printing the complete line to put in libs.lock (how a pin is added).
# Environment: CERES_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export),
#   CERES_LIBS_LOCK (default: libs.lock next to this script),
#   CERES_DEBIAN_MIRROR (a Debian archive URI to use instead of the machine's
#   apt sources, for a machine whose sources are not Debian's: Ubuntu, a
#   Jetson; every file is still checked against the lock's SHA-256).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lock=${CERES_LIBS_LOCK:-$here/libs.lock}
CERES_CACHE=${CERES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export}
src=$CERES_CACHE/src
aptdir=$src/apt

die() { echo "sources.sh: $*" >&2; exit 1; }
log() { echo "sources.sh: $*" >&2; }

[ -r "$lock" ] || die "lock file $lock not found (expected release/libs.lock)"

# lock_entries prints the lock's entries, comments and blank lines dropped.
lock_entries() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$lock"; }

# Every entry: NAME SOURCE-PACKAGE VERSION DIST [FILE=SHA256 ...]
while read -r name pkg ver dist _; do
	[ -n "$dist" ] || die "$lock: entry '$name' needs NAME SOURCE-PACKAGE VERSION DIST FILE=SHA256..."
done < <(lock_entries)

# derived_sources prints one deb-src line per (archive, release, suffix): the
# machine's Debian entries (those whose suite is its own release, with or
# without a -suffix) re-targeted at each release in $dists.
derived_sources() {
	local codename dists=$1
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "/etc/os-release has no VERSION_CODENAME: cannot tell which apt entries are Debian's"
	local files=() f
	[ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
	for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || die "no apt sources found (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list|*.sources)"
	# Normalise both formats to: URI SUITE SIGNED-BY COMPONENTS...
	local f
	for f in "${files[@]}"; do
		case $f in
		*.sources)
			awk '
			function flush() {
				if (types ~ /(^| )deb(-src)?( |$)/ && enabled != "no" && uris != "")
					{ nu = split(uris, U, " "); ns = split(suites, S, " ")
					  for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
						print U[i], S[j], (signed == "" ? "-" : signed), comps }
				types = uris = suites = comps = signed = ""; enabled = ""; key = ""
			}
			/^[[:space:]]*#/ { next }
			/^[[:space:]]*$/ { flush(); next }
			/^[[:space:]]/ { next }   # continuation (an inline key block): not a path
			{ k = tolower($1); sub(/:$/, "", k); v = $0; sub(/^[^:]*:[[:space:]]*/, "", v)
			  if (k == "types") types = v; else if (k == "uris") uris = v
			  else if (k == "suites") suites = v; else if (k == "components") comps = v
			  else if (k == "enabled") enabled = tolower(v)
			  else if (k == "signed-by" && v ~ /^\//) signed = v }
			END { flush() }' "$f"
			;;
		*)
			awk '
			/^[[:space:]]*(#|$)/ { next }
			$1 == "deb" || $1 == "deb-src" {
				signed = "-"; i = 2
				if ($2 ~ /^\[/) {
					opts = ""
					for (; i <= NF; i++) { opts = opts " " $i; if ($i ~ /\]$/) { i++; break } }
					if (match(opts, /signed-by=[^] ]+/)) signed = substr(opts, RSTART + 10, RLENGTH - 10)
				}
				uri = $i; suite = $(i + 1); comps = ""
				for (j = i + 2; j <= NF; j++) comps = comps (comps == "" ? "" : " ") $j
				print uri, suite, signed, comps
			}' "$f"
			;;
		esac
	done | awk -v codename="$codename" -v dists="$dists" '
		{ base = $2; suffix = ""; if (match($2, /-.*/)) { base = substr($2, 1, RSTART - 1); suffix = substr($2, RSTART) }
		  if (base != codename) next
		  comps = ""; for (j = 4; j <= NF; j++) comps = comps " " $j
		  n = split(dists, D, " ")
		  for (d = 1; d <= n; d++) {
			line = "deb-src " ($3 == "-" ? "" : "[signed-by=" $3 "] ") $1 " " D[d] suffix comps
			if (!(line in seen)) { seen[line] = 1; print line }
		  } }'
}

apt_ready=
apt_opts=(
	-o "Dir::Etc::SourceList=$aptdir/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$aptdir/lists"
	-o "Dir::Cache=$aptdir/cache"
	-o Dir::Etc::Preferences=/dev/null
	-o Dir::Etc::PreferencesParts=/dev/null
	-o Acquire::Languages=none
	-o APT::Get::Only-Source=true
	-q
)
# As root, apt drops to the _apt user to download, which cannot write into a
# cache under root's home; downloading as the invoking user is what a user
# without root does anyway.
[ "$(id -u)" = 0 ] && apt_opts+=(-o APT::Sandbox::User=root)

# apt_prepare writes the private sources list and refreshes its indexes once
# per run, and only when some source has to be fetched.
apt_prepare() {
	[ -z "$apt_ready" ] || return 0
	local dists
	dists=$(lock_entries | awk '{ print $4 }' | sort -u | tr '\n' ' ')
	mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
	if [ -n "${CERES_DEBIAN_MIRROR:-}" ]; then
		# The lock's SHA-256 of every file is what is trusted: the archive's
		# signature is checked too where Debian's keyring is installed.
		local opt="[trusted=yes]" d
		[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && opt="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
		for d in $dists; do echo "deb-src $opt $CERES_DEBIAN_MIRROR $d main"; done > "$aptdir/sources.list.new"
	else
		derived_sources "$dists" > "$aptdir/sources.list.new"
	fi
	[ -s "$aptdir/sources.list.new" ] || die "no Debian entries for this release in the machine's apt sources: cannot derive deb-src lines for: $dists"
	mv "$aptdir/sources.list.new" "$aptdir/sources.list"
	log "private apt sources ($aptdir/sources.list):"
	sed 's/^/    /' "$aptdir/sources.list" >&2
	apt-get "${apt_opts[@]}" update >&2 || die "apt-get update with $aptdir/sources.list failed"
	apt_ready=1
}

# verify_files DIR ENTRY...: the files in DIR must be exactly those the lock
# entry lists, each with its SHA-256.
verify_files() {
	local dir=$1 name=$2; shift 2
	local pair file want got bad=0
	declare -A listed=()
	for pair in "$@"; do
		file=${pair%%=*}; want=${pair#*=}
		listed[$file]=1
		if [ ! -f "$dir/$file" ]; then
			echo "sources.sh: $name: $file: expected sha256 $want, found no such file (not fetched by apt-get source)" >&2
			bad=1; continue
		fi
		got=$(sha256sum "$dir/$file" | cut -d' ' -f1)
		if [ "$got" != "$want" ]; then
			echo "sources.sh: $name: $dir/$file: expected sha256 $want (libs.lock), found $got" >&2
			bad=1
		fi
	done
	for file in "$dir"/*; do
		[ -f "$file" ] || continue
		file=${file##*/}
		if [ -z "${listed[$file]:-}" ]; then
			echo "sources.sh: $name: $dir/$file (sha256 $(sha256sum "$dir/$file" | cut -d' ' -f1)) was fetched but is not listed in libs.lock" >&2
			bad=1
		fi
	done
	return $bad
}

# fetch NAME PKG VER DIR: download the source package into DIR (emptied first).
fetch() {
	local name=$1 pkg=$2 ver=$3 dir=$4
	apt_prepare
	rm -rf "$dir"; mkdir -p "$dir"
	log "$name: fetching source package $pkg=$ver"
	if ! (cd "$dir" && apt-get "${apt_opts[@]}" source --download-only "$pkg=$ver" >&2); then
		local have
		have=$(apt-cache "${apt_opts[@]}" showsrc "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -u | tr '\n' ' ')
		die "$name: source package $pkg version $ver (libs.lock) not found in $aptdir/sources.list; versions there: ${have:-none}"
	fi
}

mkdir -p "$src"
# One run at a time (libs.sh amd64 and arm64 may start together): a second
# waits, then finds the sources verified and unpacked.
command -v flock > /dev/null || die "flock not found (util-linux)"
exec 8> "$src/.lock"
flock 8
while read -r name pkg ver dist files; do
	line="$name $pkg $ver $dist $files"
	plain=${ver#*:}   # file and directory names carry no epoch
	tree=$src/$name-$plain
	stamp=$tree/.ceres-source-verified
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$line" ]; then
		printf '%s\t%s\n' "$name" "$tree"
		continue
	fi
	dl=$src/dl/${pkg}_$plain
	read -r -a pairs <<< "$files"
	if [ ${#pairs[@]} -eq 0 ]; then
		fetch "$name" "$pkg" "$ver" "$dl"
		entry="$name $pkg $ver $dist"
		for f in "$dl"/*; do entry+=" ${f##*/}=$(sha256sum "$f" | cut -d' ' -f1)"; done
		die "$name: libs.lock pins no files; after checking them, put this line in $lock:
$entry"
	fi
	if ! verify_files "$dl" "$name" "${pairs[@]}" 2>/dev/null; then
		fetch "$name" "$pkg" "$ver" "$dl"
		verify_files "$dl" "$name" "${pairs[@]}" || die "$name: fetched files do not match libs.lock (see above); nothing unpacked"
	fi
	dsc=
	for pair in "${pairs[@]}"; do
		case ${pair%%=*} in *.dsc) dsc=$dl/${pair%%=*} ;; esac
	done
	[ -n "$dsc" ] || die "$lock: $name lists no .dsc file"
	log "$name: unpacking $(basename "$dsc") with dpkg-source -x"
	tmp=$src/.unpack-$name.$$
	rm -rf "$tmp" "$tree"; mkdir -p "$tmp"
	# The .dsc's signature is not checked here (that needs debian-keyring):
	# every file is already pinned by SHA-256 in libs.lock.
	dpkg-source --no-copy -x "$dsc" "$tmp/tree" > "$src/.unpack-$name.log" 2>&1 ||
		{ cat "$src/.unpack-$name.log" >&2; rm -rf "$tmp"; die "$name: dpkg-source -x $dsc failed"; }
	mv "$tmp/tree" "$tree"; rm -rf "$tmp" "$src/.unpack-$name.log"
	printf '%s\n' "$line" > "$stamp"
	printf '%s\t%s\n' "$name" "$tree"
done < <(lock_entries)
