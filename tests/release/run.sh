#!/usr/bin/env bash
# run.sh is the release check: what we test is what we ship. The static
# release binary, as users run it, must make the very bytes the developer
# build makes on this machine:
#
#   bash tests/release/run.sh RELEASE_BINARY DEV_BINARY [--arch amd64|arm64]
#        [--notices FILE] [--wheel WHEEL] [--image ARCHIVE]
#
# 1. The dev binary runs the command set on this host: synth (two
#    sessions), export (SVT-AV1 and H.264), verify, merge, and a two-task
#    campaign (batch).
# 2. The release binary runs the same commands in bare Debian 11 (bullseye)
#    and Debian 13 (trixie) chroots, made with debootstrap --variant=minbase
#    from the mirror this machine's apt sources name, cached under
#    $CERES_CACHE/chroots and unpacked fresh for every run; an arm64 binary
#    runs there through qemu-aarch64-static. Every output tree must equal
#    the dev build's byte for byte (tests/release/check.py tree: a
#    campaign's attempt records are compared without their times, host and
#    pid, its page only for being there).
# 3. The wheel (release/wheel.py; built from RELEASE_BINARY unless --wheel
#    names one) installs with each chroot's own pip, offline, and its
#    ceres-export is the release binary and runs.
# 4. The image (release/image.sh; built unless --image names one) loads in
#    podman; it runs `version` and an export of a session mounted with -v,
#    as its user 65532, whose shard must equal the dev build's. An arm64
#    image runs only where the kernel has binfmt for aarch64; elsewhere its
#    config and binary are checked and the binary run through qemu.
#
# Prints a table (platform, command, result, seconds) and exits 1 on any
# difference or failure, naming platform and command. Needs root
# (debootstrap, chroot, mount namespaces), debootstrap, zstd, python3,
# podman and buildah (runc), and qemu-user-static for arm64.
#
# Env: CERES_CACHE           cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export)
#      CERES_DEBIAN_MIRROR   Debian mirror URL (default: the one this machine's apt sources name)
#      CERES_RELEASE_SUITES  Debian suites (default "bullseye trixie")
#      CERES_RELEASE_WORK    scratch directory (default: a new one under ${TMPDIR:-/tmp}),
#                            removed after a run that passed
set -euo pipefail

prog=tests/release/run.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
	echo "usage: $prog RELEASE_BINARY DEV_BINARY [--arch amd64|arm64] [--notices FILE] [--wheel WHEEL] [--image ARCHIVE]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
release_bin=$1 dev_bin=$2
shift 2
arch=amd64 notices="" wheel="" image=""
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=${2:-}; shift 2 ;;
	--notices) notices=${2:-}; shift 2 ;;
	--wheel) wheel=${2:-}; shift 2 ;;
	--image) image=${2:-}; shift 2 ;;
	*) usage ;;
	esac
done
case $arch in amd64 | arm64) ;; *) echo "$prog: --arch $arch: want amd64 or arm64" >&2; exit 2 ;; esac
for f in "$release_bin" "$dev_bin"; do
	[ -x "$f" ] || { echo "$prog: $f: not an executable file" >&2; exit 2; }
done
release_bin=$(realpath "$release_bin") dev_bin=$(realpath "$dev_bin")
if [ -z "$notices" ]; then
	notices="$(dirname "$release_bin")/THIRD_PARTY_NOTICES"
fi
[ -f "$notices" ] || { echo "$prog: notices file $notices not found (--notices FILE)" >&2; exit 2; }
notices=$(realpath "$notices")
[ "$(id -u)" = 0 ] || { echo "$prog: needs root (debootstrap, chroot, mount namespaces)" >&2; exit 2; }
need=(debootstrap zstd tar python3 unshare chroot flock podman)
[ -n "$image" ] || need+=(buildah)
[ "$arch" = amd64 ] || need+=(qemu-aarch64-static)
for tool in "${need[@]}"; do
	command -v "$tool" >/dev/null || { echo "$prog: $tool not found on PATH" >&2; exit 2; }
done
[ "$(uname -m)" = x86_64 ] || { echo "$prog: runs on an x86_64 host (the chroots are amd64), not $(uname -m)" >&2; exit 2; }

cache="${CERES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export}"
export CERES_CACHE=$cache
suites=${CERES_RELEASE_SUITES:-bullseye trixie}
work=${CERES_RELEASE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ceres-release.XXXXXX")}
mkdir -p "$work" "$cache/chroots"
work=$(realpath "$work")
check=(python3 "$here/check.py")

# ---------------------------------------------------------------- results
rows=()
failures=()
row() { rows+=("$1|$2|$3|$4"); }
fail() {
	failures+=("$1: $2")
	echo "FAIL: $1: $2" >&2
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

print_table() {
	echo
	printf '%-22s %-52s %-28s %8s\n' platform command result seconds
	printf '%-22s %-52s %-28s %8s\n' -------- ------- ------ -------
	local r p c res s
	for r in "${rows[@]}"; do
		IFS='|' read -r p c res s <<<"$r"
		printf '%-22s %-52s %-28s %8s\n' "$p" "$c" "$res" "$s"
	done
}

# ---------------------------------------------------------------- the release binary
read -r elf_arch elf_link < <("${check[@]}" elf "$release_bin")
if [ "$elf_arch" != "$arch" ] || [ "$elf_link" != static ]; then
	echo "$prog: $release_bin is an $elf_arch $elf_link binary; want a static $arch one" >&2
	exit 1
fi
# binfmt for aarch64 lets the kernel run an arm64 binary (and podman an
# arm64 image) by itself; without it the binary is run through qemu.
binfmt_arm64=no
if [ "$arch" = arm64 ] && [ -r /proc/sys/fs/binfmt_misc/qemu-aarch64 ] &&
	[ "$(head -n1 /proc/sys/fs/binfmt_misc/qemu-aarch64)" = enabled ]; then
	binfmt_arm64=yes
fi
run_release=("$release_bin")
in_chroot_bin=(/usr/local/bin/ceres-export)
qemu_note=""
if [ "$arch" = arm64 ] && [ "$binfmt_arm64" = no ]; then
	run_release=(qemu-aarch64-static "$release_bin")
	in_chroot_bin=(/usr/local/bin/qemu-aarch64-static /usr/local/bin/ceres-export)
	qemu_note=" (qemu)"
fi
release_version=$("${run_release[@]}" version --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])') ||
	{ echo "$prog: $release_bin version --json: no version" >&2; exit 1; }
release_sha=$(sha256sum "$release_bin" | cut -d' ' -f1)
echo "== release check: $release_bin ($arch, static, $release_version); dev build $dev_bin; work $work"
echo "   binfmt for aarch64: $([ "$arch" = arm64 ] && echo "$binfmt_arm64" || echo n/a)"

# ---------------------------------------------------------------- the commands
# The command set, the same on every platform: NAME then the arguments.
# Small sessions (a fifth of the specification's durations, 160x120
# cameras) keep the check within CI's budget under qemu.
synth_args=(--cameras 2 --time-scale 0.2 --width 160 --height 120)
commands=(
	"version|version"
	"synth S|synth -o S --seed 1 ${synth_args[*]}"
	"synth S2|synth -o S2 --seed 2 ${synth_args[*]}"
	"export A (av1)|export S -o A --profile profile.yaml"
	"export H (h264)|export S -o H --vcodec h264 --profile profile.yaml"
	"export B (av1)|export S2 -o B --profile profile.yaml"
	"verify A|verify A --journal S"
	"verify H|verify H --journal S"
	"merge A B|merge A B -o M"
	"batch (2 tasks)|batch manifest.json -o O --jobs 1"
)

# setup_dir makes a platform's working directory: the profile and the
# campaign manifest the commands read.
setup_dir() {
	mkdir -p "$1"
	cp "$root/profiles/synth.yaml" "$1/profile.yaml"
	cat >"$1/manifest.json" <<-'EOF'
		{
		  "schema_version": 1,
		  "campaign_id": "release-check",
		  "settings": {
		    "av1": {"export": {"profile": "profile.yaml"}},
		    "h264": {"export": {"profile": "profile.yaml", "vcodec": "h264"}}
		  },
		  "cases": [
		    {"case_id": "s1", "setting_id": "av1", "run_id": "1", "session": "S"},
		    {"case_id": "s2", "setting_id": "h264", "run_id": "1", "session": "S2"}
		  ]
		}
	EOF
}

# says_static: the version text on stdin has the line "linkage static",
# which the binary writes from its own ELF headers (no program interpreter).
says_static() { grep -Eq '^[[:space:]]*linkage[[:space:]]+static([[:space:]]|$)'; }

# run_set PLATFORM DIR LOGDIR RUNNER...: every command, the runner given
# the command's arguments with DIR as its working directory. version's
# output goes to the log; verify's to DIR (compared like the rest).
clean_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp TZ=UTC LC_ALL=C.UTF-8)
run_set() {
	local platform=$1 dir=$2 logs=$3
	shift 3
	local entry name args t0 rc out err file
	mkdir -p "$logs"
	for entry in "${commands[@]}"; do
		name=${entry%%|*} args=${entry#*|}
		file=$(echo "${name%% (*}" | tr -c 'A-Za-z0-9\n' -)
		out="$logs/$file.out" err="$logs/$file.err"
		case $name in verify*) out="$dir/$file.txt" ;; esac
		t0=$(now)
		rc=0
		# shellcheck disable=SC2086 # args is a word list
		"$@" $args >"$out" 2>"$err" || rc=$?
		if [ "$rc" -ne 0 ]; then
			row "$platform" "$name" "FAIL (exit $rc)" "$(since "$t0")"
			fail "$platform" "$name: exit $rc (stderr: $err)"
			tail -n 5 "$err" >&2 || true
			continue
		fi
		if [ "$name" = version ] && [ "$platform" != "host (dev)" ] && ! says_static <"$out"; then
			row "$platform" "$name" "FAIL (not \"linkage static\")" "$(since "$t0")"
			fail "$platform" "version does not say \"linkage static\": $(tr '\n' ' ' <"$out")"
			continue
		fi
		row "$platform" "$name" ok "$(since "$t0")"
	done
}

host_run() { (cd "$1" && shift && exec "${clean_env[@]}" "$@"); }

# in_chroot ROOT DIR CMD...: CMD in the chroot ROOT with DIR mounted at /w
# (its working directory), in its own mount and PID namespaces with its own
# /proc, so that nothing it mounts or starts outlives it.
in_chroot() {
	local r=$1 d=$2
	shift 2
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --pid --fork --propagation private -- /bin/sh -c '
		set -e
		r=$1 d=$2
		shift 2
		mount --bind "$d" "$r/w"
		mount -t proc proc "$r/proc"
		exec chroot "$r" /bin/sh -c "cd /w && exec \"\$@\"" sh "$@"
	' sh "$r" "$d" "${clean_env[@]}" "$@"
}

compare() { # PLATFORM DIR: DIR against the dev build's tree
	local t0 report
	t0=$(now)
	report="$work/logs/compare-${1//[^a-z0-9]/_}.txt"
	if "${check[@]}" tree "$work/host" "$2" >"$report" 2>&1; then
		row "$1" "outputs = dev build's" "identical ($(awk '{print $1; exit}' "$report") files)" "$(since "$t0")"
	else
		row "$1" "outputs = dev build's" "DIFFER" "$(since "$t0")"
		fail "$1" "outputs differ from the dev build's ($report)"
		head -n 80 "$report" | sed 's/^/    /' >&2
	fi
}

# ---------------------------------------------------------------- 0. the helpers' own tests
mkdir -p "$work/logs"
t0=$(now)
if PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s "$here" -p 'test_*.py' >"$work/logs/unittest.log" 2>&1; then
	row "host" "unit tests (wheel.py, check.py)" ok "$(since "$t0")"
else
	row "host" "unit tests (wheel.py, check.py)" FAIL "$(since "$t0")"
	fail "host" "unit tests of release/wheel.py and tests/release/check.py (log $work/logs/unittest.log)"
	tail -n 20 "$work/logs/unittest.log" >&2
fi

# ---------------------------------------------------------------- 1. dev build on the host
setup_dir "$work/host"
run_set "host (dev)" "$work/host" "$work/logs/host" host_run "$work/host" "$dev_bin"

# ---------------------------------------------------------------- artefacts under test
mkdir -p "$work/dist"
if [ -z "$wheel" ]; then
	t0=$(now)
	wheel=$(python3 "$root/release/wheel.py" "$release_bin" "$release_version" "$arch" "$work/dist" --notices "$notices")
	row "build" "release/wheel.py" "ok ($(du -m "$wheel" | cut -f1) MB)" "$(since "$t0")"
fi
wheel=$(realpath "$wheel")
if [ -z "$image" ]; then
	t0=$(now)
	image="$work/dist/ceres-export-$arch.oci.tar"
	if bash "$root/release/image.sh" "$release_bin" "$notices" "$image" "$arch" >"$work/logs/image-build.log" 2>&1; then
		row "build" "release/image.sh" "ok ($(du -m "$image" | cut -f1) MB)" "$(since "$t0")"
	else
		row "build" "release/image.sh" FAIL "$(since "$t0")"
		fail "build" "release/image.sh (log $work/logs/image-build.log)"
		image=""
	fi
fi

# ---------------------------------------------------------------- 2. the chroots
# debian_mirror prints the Debian mirror this machine's apt uses for its
# own release (apt's index targets; else the sources files).
debian_mirror() {
	if [ -n "${CERES_DEBIAN_MIRROR:-}" ]; then
		echo "${CERES_DEBIAN_MIRROR%/}"
		return
	fi
	local codename site
	codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release | tr -d '"')
	# shellcheck disable=SC2016 # apt's own format fields
	site=$(apt-get indextargets --format '$(SITE) $(RELEASE) $(IDENTIFIER)' 2>/dev/null |
		awk -v c="$codename" '$2 == c && $3 == "Packages" { print $1; exit }')
	if [ -z "$site" ]; then
		site=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk -v c="$codename" '
				/^deb / && $3 == c { print $2; exit }
				/^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c && uri != "") { print uri; exit } }')
	fi
	[ -n "$site" ] || { echo "$prog: no Debian mirror in this machine's apt sources for ${codename:-its release}; set CERES_DEBIAN_MIRROR" >&2; return 1; }
	echo "${site%/}"
}

# ensure_chroot SUITE prints the cached tarball of a bare SUITE chroot,
# made once with debootstrap (minbase, python3 and python3-venv for the
# wheel test, nothing of FFmpeg). The name holds a hash of the recipe, so a
# changed recipe makes a new one; a lock keeps two runs from making it twice.
ensure_chroot() {
	local suite=$1 host_arch recipe key tarball mirror t0 tmp
	host_arch=$(dpkg --print-architecture)
	recipe="debootstrap --variant=minbase --include=python3,python3-venv $suite $host_arch"
	key=$(printf '%s' "$recipe" | sha256sum | cut -c1-12)
	tarball="$cache/chroots/$suite-$host_arch-$key.tar.zst"
	exec 9>"$tarball.lock"
	flock 9
	if [ -f "$tarball" ]; then
		exec 9>&-
		echo "$tarball"
		return
	fi
	mirror=$(debian_mirror) || return 1
	# A suite the mirror no longer serves (an old release moved to the
	# archive) is said as such, not as a debootstrap failure.
	if ! python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30)' "$mirror/dists/$suite/Release" 2>/dev/null; then
		echo "$prog: $mirror does not serve Debian $suite (no $mirror/dists/$suite/Release): it may have moved to the Debian archive; set CERES_DEBIAN_MIRROR to a mirror that serves it, or CERES_RELEASE_SUITES to leave it out" >&2
		exec 9>&-
		return 1
	fi
	t0=$(now)
	tmp=$(mktemp -d "$work/debootstrap-$suite.XXXXXX")
	# In its own mount namespace: the /proc and /sys debootstrap mounts in
	# the new root go with it, even when it fails half-way.
	if ! unshare --mount --propagation private -- debootstrap --variant=minbase --include=python3,python3-venv --arch="$host_arch" "$suite" "$tmp/rootfs" "$mirror" \
		>"$work/logs/debootstrap-$suite.log" 2>&1; then
		echo "$prog: debootstrap $suite from $mirror failed (log $work/logs/debootstrap-$suite.log)" >&2
		tail -n 5 "$work/logs/debootstrap-$suite.log" >&2
		exec 9>&-
		return 1
	fi
	rm -rf "$tmp/rootfs/var/cache/apt/archives/"*.deb "$tmp/rootfs/var/lib/apt/lists/"*_Packages
	tar --numeric-owner -C "$tmp/rootfs" -cf - . | zstd -q -T2 -9 -o "$tarball.tmp"
	mv "$tarball.tmp" "$tarball"
	rm -rf "$tmp"
	exec 9>&-
	echo "$suite: chroot made in $(since "$t0") s: $tarball ($(du -m "$tarball" | cut -f1) MB)" >&2
	echo "$tarball"
}

wheel_name=$(basename "$wheel")
case $arch in amd64) machine=x86_64 ;; arm64) machine=aarch64 ;; esac

for suite in $suites; do
	platform="$suite/$arch$qemu_note"
	t0=$(now)
	if ! tarball=$(ensure_chroot "$suite" 2>"$work/logs/chroot-$suite.err"); then
		cat "$work/logs/chroot-$suite.err" >&2
		row "$platform" "chroot" FAIL "$(since "$t0")"
		fail "$platform" "chroot: $(tail -n1 "$work/logs/chroot-$suite.err")"
		continue
	fi
	if grep -q "chroot made" "$work/logs/chroot-$suite.err"; then
		row "$suite" "chroot: debootstrap + pack (cold)" "ok ($(du -m "$tarball" | cut -f1) MB)" "$(since "$t0")"
	fi
	t0=$(now)
	r="$work/chroots/$suite"
	rm -rf "$r"
	mkdir -p "$r"
	zstd -q -dc "$tarball" | tar --numeric-owner -C "$r" -xf -
	mkdir -p "$r/w" "$r/usr/local/bin"
	install -m 0755 "$release_bin" "$r/usr/local/bin/ceres-export"
	if [ -n "$qemu_note" ]; then
		install -m 0755 "$(command -v qemu-aarch64-static)" "$r/usr/local/bin/qemu-aarch64-static"
	fi
	row "$platform" "chroot: unpack fresh (warm)" ok "$(since "$t0")"

	d="$work/$suite"
	setup_dir "$d"
	run_set "$platform" "$d" "$work/logs/$suite" in_chroot "$r" "$d" "${in_chroot_bin[@]}"
	compare "$platform" "$d"

	# The wheel, with this suite's own pip, no index: a native install
	# where the machine matches, and --target installs for each platform
	# tag pip must accept (manylinux for glibc, musllinux for musl).
	t0=$(now)
	wd="$work/wheel-$suite"
	mkdir -p "$wd"
	cp "$wheel" "$wd/"
	# shellcheck disable=SC2016 # expanded by the chroot's shell
	script='set -e
		python3 -m venv /v
		pip="/v/bin/pip --disable-pip-version-check --no-cache-dir"
		$pip --version
		if [ "$1" = native ]; then
			$pip install --no-index "/w/$2"
			/v/bin/ceres-export version
			/v/bin/python -m ceres_export version
			sha256sum /v/bin/ceres-export
		fi
		for tag in manylinux_2_17_$3 musllinux_1_1_$3; do
			$pip install --no-index --only-binary=:all: --platform "$tag" --target "/t-$tag" "/w/$2"
			sha256sum "/t-$tag/bin/ceres-export"
			if [ "$1" = qemu ]; then
				/usr/local/bin/qemu-aarch64-static "/t-$tag/bin/ceres-export" version
			fi
		done'
	# An arm64 wheel installs with --target only (pip refuses a foreign
	# platform into a venv); its binary then runs as the others do here.
	mode=native
	if [ "$arch" = arm64 ]; then
		mode=foreign
		[ -z "$qemu_note" ] || mode=qemu
	fi
	if in_chroot "$r" "$wd" /bin/sh -c "$script" sh "$mode" "$wheel_name" "$machine" >"$work/logs/wheel-$suite.log" 2>&1; then
		shas=$(awk '/ceres-export$/ && length($1) == 64 { print $1 }' "$work/logs/wheel-$suite.log" | sort -u)
		if [ "$shas" = "$release_sha" ]; then
			pipv=$(awk '/^pip / { print $2; exit }' "$work/logs/wheel-$suite.log")
			case $mode in native) how="install, run" ;; qemu) how="--target install, run" ;; *) how="--target install" ;; esac
			row "$platform" "wheel: pip $pipv $how (offline)" ok "$(since "$t0")"
		else
			row "$platform" "wheel: installed binary" "FAIL (not the release)" "$(since "$t0")"
			fail "$platform" "the wheel installed a binary other than the release binary ($shas)"
		fi
	else
		row "$platform" "wheel: pip install" FAIL "$(since "$t0")"
		fail "$platform" "wheel install (log $work/logs/wheel-$suite.log)"
		tail -n 8 "$work/logs/wheel-$suite.log" >&2
	fi
	rm -rf "$r" "$wd"
done

# ---------------------------------------------------------------- 4. the image
podman_check() {
	local t0 cfg name dir out
	t0=$(now)
	cfg="$work/logs/image-config.json"
	if ! "${check[@]}" oci "$image" /usr/local/bin/ceres-export >"$cfg" 2>"$work/logs/image-config.err"; then
		row "image" "config and binary" FAIL "$(since "$t0")"
		fail "image" "reading $image: $(tail -n1 "$work/logs/image-config.err")"
		return
	fi
	local problems
	problems=$(python3 - "$cfg" "$release_sha" "$arch" "$release_version" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		sha, arch, version = sys.argv[2:5]
		cc = c.get("config", {})
		want = {
		    "architecture": (c.get("architecture"), arch),
		    "binary sha256": (c.get("file_sha256"), sha),
		    "User": (cc.get("User"), "65532:65532"),
		    "Entrypoint": (cc.get("Entrypoint"), ["ceres-export"]),
		    "WorkingDir": (cc.get("WorkingDir"), "/work"),
		    "PATH": ("/usr/local/bin" in next((e for e in cc.get("Env", []) if e.startswith("PATH=")), "").split("=", 1)[-1].split(":"), True),
		    "version label": (cc.get("Labels", {}).get("org.opencontainers.image.version"), version),
		}
		for label in ("title", "licenses", "revision", "source"):
		    want[label + " label"] = (bool(cc.get("Labels", {}).get("org.opencontainers.image." + label)), True)
		for k, (got, exp) in sorted(want.items()):
		    if got != exp:
		        print("%s: %r, want %r" % (k, got, exp))
		EOF
	)
	if [ -n "$problems" ]; then
		row "image" "config and binary" FAIL "$(since "$t0")"
		fail "image" "config: $(echo "$problems" | tr '\n' ';')"
	else
		row "image" "config, labels, binary = release" ok "$(since "$t0")"
	fi

	# podman with the store and settings image.sh uses.
	eval "$(bash "$root/release/image.sh" --print-env)"
	t0=$(now)
	if ! name=$(podman load -q -i "$image" 2>"$work/logs/podman-load.err" | awk '/^Loaded image: / && !n++ { print $3 }') || [ -z "$name" ]; then
		row "image" "podman load" FAIL "$(since "$t0")"
		fail "image" "podman load $image: $(tail -n1 "$work/logs/podman-load.err")"
		return
	fi
	row "image" "podman load" ok "$(since "$t0")"
	if [ "$arch" = arm64 ] && [ "$binfmt_arm64" = no ]; then
		t0=$(now)
		if out=$(qemu-aarch64-static "$release_bin" version) && says_static <<<"$out"; then
			row "image/arm64" "podman run: not run (no binfmt)" "binary run via qemu" "$(since "$t0")"
		else
			row "image/arm64" "version via qemu" FAIL "$(since "$t0")"
			fail "image/arm64" "the image's binary does not run through qemu"
		fi
		podman rmi -f "$name" >/dev/null 2>&1 || true
		return
	fi
	t0=$(now)
	if podman run --rm "$name" version >"$work/logs/podman-version.out" 2>&1 && says_static <"$work/logs/podman-version.out"; then
		row "image" "podman run version" ok "$(since "$t0")"
	else
		row "image" "podman run version" FAIL "$(since "$t0")"
		fail "image" "podman run $name version: $(tail -n2 "$work/logs/podman-version.out" | tr '\n' ' ')"
	fi
	# The session mounted at the image's working directory, owned by its
	# user (65532), so that the export may stage and write its shard there.
	t0=$(now)
	dir="$work/image-run"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "$work/host/S" "$work/host/profile.yaml" "$dir/"
	chown -R 65532:65532 "$dir"
	if podman run --rm -v "$dir:/work" "$name" export S -o A --profile profile.yaml >"$work/logs/podman-export.out" 2>&1; then
		row "image" "podman run export (user 65532, -v)" ok "$(since "$t0")"
		t0=$(now)
		if "${check[@]}" tree "$work/host/A" "$dir/A" >"$work/logs/compare-image.txt" 2>&1; then
			row "image" "shard = dev build's" "identical ($(awk '{print $1; exit}' "$work/logs/compare-image.txt") files)" "$(since "$t0")"
		else
			row "image" "shard = dev build's" DIFFER "$(since "$t0")"
			fail "image" "the image's shard differs from the dev build's ($work/logs/compare-image.txt)"
			head -n 40 "$work/logs/compare-image.txt" | sed 's/^/    /' >&2
		fi
	else
		row "image" "podman run export (user 65532, -v)" FAIL "$(since "$t0")"
		fail "image" "podman run export: $(tail -n3 "$work/logs/podman-export.out" | tr '\n' ' ')"
	fi
	podman rmi -f "$name" >/dev/null 2>&1 || true
}
if [ -n "$image" ]; then
	podman_check
fi

print_table
if [ ${#failures[@]} -gt 0 ]; then
	echo
	echo "release check FAILED (work dir kept: $work):"
	printf '  %s\n' "${failures[@]}"
	exit 1
fi
rm -rf "$work"
echo
echo "release check passed: $arch release binary $release_version = dev build, byte for byte"
