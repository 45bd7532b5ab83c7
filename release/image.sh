#!/usr/bin/env bash
# image.sh builds the ceres-export OCI image from the static release binary,
# with buildah and no container daemon, and writes it as an oci-archive:
#
#   bash release/image.sh BINARY NOTICES OUT_ARCHIVE [ARCH]
#
# The image is FROM scratch: the binary at /usr/local/bin/ceres-export (on
# PATH), the third-party notices at /usr/share/doc/ceres-export/, an empty
# world-writable sticky /tmp (for anything that asks for a temporary
# directory), /work (owned by 65532) as the working directory, user
# 65532:65532 (no root inside), ENTRYPOINT ["ceres-export"], and the OCI
# labels. ARCH (amd64 or arm64) defaults to the binary's ELF machine and
# must agree with it.
#
# Reproducible: every file, the image's creation time and its history carry
# the timestamp SOURCE_DATE_EPOCH (0 when unset), and the archive is
# re-packed in a fixed order with fixed tar headers, so the same binary,
# notices, version and revision give the same archive bytes.
#
# The label version is the binary's own (`version --json`, run through
# qemu-aarch64-static for an arm64 binary on another host) unless
# CERES_VERSION says it; the revision label is CERES_REVISION, else the
# vcs.revision the Go toolchain recorded in the binary (`go version -m`),
# else the commit in the version's build metadata.
#
# Container storage is this tool's own, under the cache directory
# (${CERES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export}/containers),
# never the user's: vfs driver, chroot isolation, cgroupfs, no daemon.
# `image.sh --print-env` prints those settings as shell commands, so that
# tests/release/run.sh's podman sees the same store and settings.
set -euo pipefail

prog=release/image.sh

# containers_env exports the settings buildah and podman need on a machine
# without systemd or a daemon: the storage (vfs, under our cache), chroot
# isolation, cgroupfs, runc, the resource limits below, and no network (the
# exporter needs none).
containers_env() {
	local cache="${CERES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export}"
	local dir="$cache/containers"
	local runtime=""
	for r in runc crun; do
		if command -v "$r" >/dev/null; then runtime=$r; break; fi
	done
	if [ -z "$runtime" ]; then
		echo "$prog: no OCI runtime: want runc or crun on PATH (apt-get install runc)" >&2
		return 1
	fi
	mkdir -p "$dir/storage" "$dir/run" "$dir/tmp"
	# Open files raised to 20000 (or the hard limit), as buildah and podman
	# were first set up on the build machine; this image alone also loaded
	# and ran there with 1024.
	ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	# podman run as root raises a container's open-files and process limits
	# to its own defaults (about a million), which a machine without
	# CAP_SYS_RESOURCE refuses ("setrlimit RLIMIT_NOFILE: Operation not
	# permitted"): containers get this shell's open-files limit and a
	# process limit of at most kernel.pid_max (on this machine runc refused
	# any process limit above pid_max, 32768, and accepted 32768).
	# runc before crun: crun refuses a machine whose cgroups are in hybrid
	# mode ("cgroups in hybrid mode not supported"), as this one's are.
	local nofile nproc pid_max
	nofile=$(ulimit -n) nproc=$(ulimit -u) pid_max=$(cat /proc/sys/kernel/pid_max)
	[ "$nofile" != unlimited ] || nofile=1048576
	if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
	cat > "$dir/storage.conf.$$" <<-EOF
		[storage]
		driver = "vfs"
		graphroot = "$dir/storage"
		runroot = "$dir/run"
	EOF
	mv "$dir/storage.conf.$$" "$dir/storage.conf"
	cat > "$dir/containers.conf.$$" <<-EOF
		[containers]
		netns = "none"
		default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		runtime = "$runtime"
		image_parallel_copies = 1
		tmp_dir = "$dir/tmp"
	EOF
	mv "$dir/containers.conf.$$" "$dir/containers.conf"
	export CONTAINERS_STORAGE_CONF="$dir/storage.conf"
	export CONTAINERS_CONF="$dir/containers.conf"
	export STORAGE_DRIVER=vfs
	export BUILDAH_ISOLATION=chroot
	export TMPDIR="$dir/tmp"
}

if [ "${1:-}" = "--print-env" ]; then
	containers_env
	printf 'export CONTAINERS_STORAGE_CONF=%q CONTAINERS_CONF=%q STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot\nulimit -n %s\n' \
		"$CONTAINERS_STORAGE_CONF" "$CONTAINERS_CONF" "$(ulimit -n)"
	exit 0
fi

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
	echo "usage: $prog BINARY NOTICES OUT_ARCHIVE [amd64|arm64]" >&2
	exit 2
fi
binary=$1 notices=$2 out=$3 arch=${4:-}
for f in "$binary" "$notices"; do
	[ -f "$f" ] || { echo "$prog: $f: no such file" >&2; exit 2; }
done
binary=$(realpath "$binary")
for tool in buildah python3; do
	command -v "$tool" >/dev/null || { echo "$prog: $tool not found on PATH (apt-get install $tool)" >&2; exit 2; }
done

# The binary's ELF header says its machine and whether it is static (no
# program interpreter): an image FROM scratch has no loader and no libc.
read -r elf_arch elf_static < <(python3 - "$binary" <<-'EOF'
	import struct, sys
	with open(sys.argv[1], "rb") as f:
	    h = f.read(64)
	    if h[:4] != b"\x7fELF" or h[4] != 2:
	        print("none no"); sys.exit()
	    m = struct.unpack_from("<H", h, 18)[0]
	    off = struct.unpack_from("<Q", h, 32)[0]
	    size, n = struct.unpack_from("<HH", h, 54)
	    f.seek(off)
	    t = f.read(size * n)
	interp = any(struct.unpack_from("<I", t, i * size)[0] == 3 for i in range(n))
	print({62: "amd64", 183: "arm64"}.get(m, "unknown"), "no" if interp else "yes")
	EOF
)
if [ "$elf_arch" = none ] || [ "$elf_arch" = unknown ]; then
	echo "$prog: $binary: not a 64-bit amd64 or arm64 ELF executable" >&2
	exit 2
fi
if [ "$elf_static" != yes ]; then
	echo "$prog: $binary: dynamically linked (it names a program interpreter); an image FROM scratch needs a static binary" >&2
	exit 2
fi
arch=${arch:-$elf_arch}
if [ "$arch" != "$elf_arch" ]; then
	echo "$prog: ARCH $arch, but $binary is an $elf_arch binary" >&2
	exit 2
fi

# The binary's version, run on this host or through qemu.
version=${CERES_VERSION:-}
if [ -z "$version" ]; then
	host_arch=$(uname -m)
	run=("$binary")
	if [ "$arch" = arm64 ] && [ "$host_arch" != aarch64 ]; then
		command -v qemu-aarch64-static >/dev/null ||
			{ echo "$prog: an arm64 binary on $host_arch: set CERES_VERSION or install qemu-user-static" >&2; exit 2; }
		run=(qemu-aarch64-static "$binary")
	elif [ "$arch" = amd64 ] && [ "$host_arch" != x86_64 ]; then
		echo "$prog: an amd64 binary on $host_arch: set CERES_VERSION" >&2
		exit 2
	fi
	version=$("${run[@]}" version --json | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["version"])
except (ValueError, KeyError, TypeError):
    sys.exit(1)') ||
		{ echo "$prog: $binary version --json: no version (set CERES_VERSION)" >&2; exit 1; }
fi
revision=${CERES_REVISION:-}
if [ -z "$revision" ] && command -v go >/dev/null; then
	revision=$(go version -m "$binary" 2>/dev/null | awk '$1 == "build" && $2 ~ /^vcs.revision=/ { sub(/^vcs.revision=/, "", $2); print $2 }')
fi
if [ -z "$revision" ] && [[ "$version" == *+* ]]; then
	revision=${version#*+}
	revision=${revision%%.*}
fi
if [ -z "$revision" ]; then
	echo "$prog: no source revision: the binary records none and its version ($version) has no +REVISION; set CERES_REVISION" >&2
	exit 1
fi
epoch=${SOURCE_DATE_EPOCH:-0}

containers_env

work=$(mktemp -d "${TMPDIR:-/tmp}/ceres-image.XXXXXX")
ctr=""
cleanup() {
	if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# The root file system as one tar with every mode, owner and time written
# out (buildah copy would make /tmp 0755 and take owners from this
# machine): buildah add unpacks it as it is.
python3 - "$binary" "$notices" "$work/rootfs.tar" "$epoch" <<-'EOF'
	import os, sys, tarfile
	binary, notices, out, epoch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
	entries = [  # path, mode, uid, source file (None: a directory)
	    ("tmp", 0o1777, 0, None),
	    ("usr", 0o755, 0, None),
	    ("usr/local", 0o755, 0, None),
	    ("usr/local/bin", 0o755, 0, None),
	    ("usr/local/bin/ceres-export", 0o755, 0, binary),
	    ("usr/share", 0o755, 0, None),
	    ("usr/share/doc", 0o755, 0, None),
	    ("usr/share/doc/ceres-export", 0o755, 0, None),
	    ("usr/share/doc/ceres-export/THIRD_PARTY_NOTICES", 0o644, 0, notices),
	    ("work", 0o755, 65532, None),
	]
	with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tf:
	    for path, mode, uid, src in entries:
	        ti = tarfile.TarInfo(path)
	        ti.mode, ti.uid, ti.gid, ti.mtime = mode, uid, uid, epoch
	        if src is None:
	            ti.type = tarfile.DIRTYPE
	            tf.addfile(ti)
	        else:
	            ti.size = os.path.getsize(src)
	            with open(src, "rb") as f:
	                tf.addfile(ti, f)
	EOF

ctr=$(buildah from --quiet --arch "$arch" --os linux scratch)
buildah add --quiet "$ctr" "$work/rootfs.tar" / >/dev/null
licenses="Apache-2.0 AND GPL-2.0-or-later"
buildah config \
	--arch "$arch" --os linux \
	--env PATH=/usr/local/bin \
	--entrypoint '["ceres-export"]' --cmd '' \
	--workingdir /work \
	--user 65532:65532 \
	--label org.opencontainers.image.title=ceres-export \
	--label "org.opencontainers.image.description=Turn CERES demonstration-capture sessions into LeRobot datasets" \
	--label "org.opencontainers.image.licenses=$licenses" \
	--label "org.opencontainers.image.version=$version" \
	--label "org.opencontainers.image.revision=$revision" \
	--label org.opencontainers.image.source=https://github.com/ceres-robotics/ceres-export \
	--created-by "release/image.sh" \
	"$ctr"

mkdir -p "$(dirname "$out")"
# The archive names the image ceres-export:VERSION (a tag cannot hold
# "+", so the build metadata follows "_"), the name podman load gives it.
tag="ceres-export:${version//+/_}"
buildah commit --quiet --format oci --timestamp "$epoch" --disable-compression=false --rm "$ctr" "oci-archive:$work/image.tar:$tag" >/dev/null
ctr=""

# buildah's archive carries the blobs' file times and owners; unpack it and
# pack it again in name order with fixed headers, so that its bytes depend
# only on the image.
mkdir "$work/oci"
tar -xf "$work/image.tar" -C "$work/oci"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --mode='u+rw,go+r,go-w' \
	--format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	-cf "$out.tmp" -C "$work/oci" .
mv "$out.tmp" "$out"
echo "$out: $tag ($arch, revision $revision)"
