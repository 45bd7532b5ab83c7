#!/usr/bin/env bash
# release/libs.sh: build the static C libraries the release binary of
# ceres-export links (dav1d, SVT-AV1, x264, libvpx, then FFmpeg with only the
# components ceres-export uses), for ARCH amd64 (native) or arm64 (cross-built
# with gcc-aarch64-linux-gnu), from the Debian source packages pinned in
# release/libs.lock (release/sources.sh fetches and verifies them).
#
# The result is a prefix $CERES_CACHE/libs/<ARCH>-<KEY>, KEY the first 16 hex
# digits of the SHA-256 of libs.lock, libs.sh and sources.sh: any pin or
# script change builds a new prefix, an unchanged one is reused. A prefix is
# built under a temporary name and renamed into place with its stamp written
# last, so a killed build never leaves a prefix that looks complete.
#
# The prefix holds only static archives (.a), headers, and .pc files that are
# relocatable (${pcfiledir}) and whose Libs/Requires already carry what
# Libs.private/Requires.private would add: cgo runs `pkg-config --libs`
# without --static, and must get a link line that works for a static link.
# It also holds share/licenses/<name>/ (each library's licence files) and
# versions.txt (one line per library: name and upstream version), which the
# release's notices are generated from.
#
# Usage: release/libs.sh ARCH        (ARCH: amd64 | arm64)
#   stdout: the prefix, as its last line. Progress and timings go to stderr;
#   each library's build log is a file in the build dir, and a failure
#   prints the tail of the failing log.
# Environment: CERES_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export),
#   CERES_LIBS_JOBS (parallel jobs, default 2).
set -euo pipefail

die() { echo "libs.sh: $*" >&2; exit 1; }
log() { echo "libs.sh: $*" >&2; }

arch=${1:-}
case $arch in
amd64 | arm64) ;;
*) die "usage: libs.sh ARCH, ARCH amd64 or arm64 (got '${arch}')" ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CERES_CACHE=${CERES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres-export}
for f in libs.lock libs.sh sources.sh; do
	[ -r "$here/$f" ] || die "$here/$f not found (libs.sh needs libs.lock and sources.sh beside it)"
done
key=$(cat "$here/libs.lock" "$here/libs.sh" "$here/sources.sh" | sha256sum | cut -c1-16)
prefix=$CERES_CACHE/libs/$arch-$key
stampname=.ceres-libs-complete

# The cached case: nothing else runs (no sources check, no compiler).
if [ -f "$prefix/$stampname" ]; then
	echo "$prefix"
	exit 0
fi

# FFmpeg's components: --disable-everything, then exactly what ceres-export
# and its tests use (internal/video, internal/verify, cmd/ceres-export).
# Each entry: configure option, then why.
ffmpeg_components=(
	# Decoders: the camera files a session names (browser recordings, and
	# what synth writes: --camera-codec vp8 | vp9 as WebM, h264 as MP4 with
	# B-frames), and the exported shard videos that verify and the report's
	# thumbnails decode again (AV1 from libsvtav1, H.264 from libx264).
	--enable-decoder=h264     # synth h264 camera files; export --vcodec h264 shards (verify decodes them)
	--enable-decoder=vp8      # synth's default camera codec (WebM): FFmpeg's native decoder, not libvpx's
	--enable-decoder=vp9      # synth --camera-codec vp9 (WebM): native decoder
	--enable-decoder=libdav1d # AV1: export's default shard codec, decoded by verify and the report; AV1 camera files
	--enable-decoder=mp3      # internal/verify/audio_test.go adds an MP3 track to a shard video:
	--enable-decoder=mp3float #   avformat_find_stream_info opens its decoder to read the stream's parameters
	# Encoders: export's two codecs (internal/video/encoder.go) and synth's
	# camera files (internal/video/synth.go).
	--enable-encoder=libsvtav1  # export --vcodec av1 (the default, LeRobot's)
	--enable-encoder=libx264    # export --vcodec h264; synth --camera-codec h264
	--enable-encoder=libvpx_vp8 # synth --camera-codec vp8 (encoder name "libvpx")
	--enable-encoder=libvpx_vp9 # synth --camera-codec vp9 (encoder name "libvpx-vp9")
	# Demuxers: camera files (WebM, MP4) and shard videos (MP4).
	--enable-demuxer=matroska # WebM/Matroska camera files (synth's vp8/vp9, browser recordings)
	--enable-demuxer=mov      # MP4 camera files (synth's h264) and every shard video (probe, verify, join, report)
	# Muxers: what internal/video opens with AllocOutputFormatContext.
	--enable-muxer=mp4  # shard videos (output.go, join.go), synth's h264 camera files, verify's audio test
	--enable-muxer=webm # synth's vp8/vp9 camera files, streaming ones for synth --live
	# Parsers: the demuxers run them to find frame boundaries and stream
	# parameters (avformat_find_stream_info) of what the decoders above read.
	--enable-parser=h264
	--enable-parser=vp8
	--enable-parser=vp9
	--enable-parser=av1
	--enable-parser=mpegaudio # the MP3 track of verify's audio test
	# Bitstream filters: all. The muxers insert some themselves (webm:
	# vp9_superframe; mp4: e.g. h264/av1 header handling), and which ones
	# depends on the stream; they are small.
	--enable-bsfs
	# Protocols: files by path (decode.go, output.go, join.go); pipe for
	# FFmpeg's "-" and pipe: URLs. Growing files use a custom AVIOContext
	# (decode.go), which needs no protocol.
	--enable-protocol=file
	--enable-protocol=pipe
	# Libraries: swscale (select.go scales every selected frame to the
	# output size and yuv420p), swresample (libavcodec's audio decoders
	# above), and avdevice and avfilter: go-astiav's cgo lines link them,
	# so they are built, with no devices or filters.
	--enable-swscale
	--enable-swresample
	--enable-avdevice
	--enable-avfilter
	--disable-postproc # --enable-gpl would build it; nothing uses it
	# Threads: --disable-autodetect turns pthreads off too, and without them
	# every decoder runs on one thread (frame and slice threads).
	--enable-pthreads
	# FFmpeg probes libc's iconv even with --disable-autodetect; it only
	# converts subtitle character sets, and a static glibc's iconv would load
	# gconv modules of whatever glibc the machine running the binary has.
	--disable-iconv
)

case $arch in
amd64)
	[ "$(uname -m)" = x86_64 ] || die "amd64 is built natively: this machine is $(uname -m), not x86_64"
	triplet=x86_64-linux-gnu
	cc=gcc
	;;
arm64)
	[ "$(uname -m)" = x86_64 ] || die "arm64 is cross-built from an x86_64 machine: this one is $(uname -m)"
	triplet=aarch64-linux-gnu
	cc=$triplet-gcc
	command -v "$cc" > /dev/null || die "$cc not found: install gcc-aarch64-linux-gnu (and g++-aarch64-linux-gnu)"
	;;
esac
for tool in "$cc" pkg-config meson ninja cmake make nasm flock; do
	command -v "$tool" > /dev/null || die "$tool not found (needed to build the libraries)"
done
jobs=${CERES_LIBS_JOBS:-2}

mkdir -p "$CERES_CACHE/libs" "$CERES_CACHE/build"
# One build of a prefix at a time; a second waits, then finds it complete.
exec 9> "$CERES_CACHE/libs/.$arch-$key.lock"
flock 9
if [ -f "$prefix/$stampname" ]; then
	echo "$prefix"
	exit 0
fi

# Sources: verified and unpacked (fetched only when missing).
declare -A srcdir=()
while IFS=$'\t' read -r name dir; do
	srcdir[$name]=$dir
done < <("$here/sources.sh")
for name in dav1d svt-av1 x264 libvpx ffmpeg; do
	[ -n "${srcdir[$name]:-}" ] || die "libs.lock has no entry named '$name' (sources.sh gave: ${!srcdir[*]})"
done

tmp=$CERES_CACHE/libs/.$arch-$key.tmp
build=$CERES_CACHE/build/$arch-$key
rm -rf "$tmp" "$build"
mkdir -p "$tmp" "$build/logs"
log "building $arch libraries into $prefix (build dir $build, -j$jobs)"

# Nothing built may name the cache's paths: the archives' __FILE__ strings
# and debug paths are made relative to the source and build trees.
cflags="-ffile-prefix-map=$CERES_CACHE/src/= -ffile-prefix-map=$build/="

# Every pkg-config lookup sees only the prefix (not the machine's own
# FFmpeg, x264 or libvpx development packages).
export PKG_CONFIG_LIBDIR=$tmp/lib/pkgconfig
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR CFLAGS CXXFLAGS LDFLAGS CPPFLAGS || true

cross_meson=()
cross_cmake=()
if [ "$arch" = arm64 ]; then
	cat > "$build/meson-cross.ini" <<-EOF
		[binaries]
		c = '$triplet-gcc'
		cpp = '$triplet-g++'
		ar = '$triplet-ar'
		strip = '$triplet-strip'
		pkgconfig = 'pkg-config'

		[host_machine]
		system = 'linux'
		cpu_family = 'aarch64'
		cpu = 'aarch64'
		endian = 'little'
	EOF
	cat > "$build/toolchain.cmake" <<-EOF
		set(CMAKE_SYSTEM_NAME Linux)
		set(CMAKE_SYSTEM_PROCESSOR aarch64)
		set(CMAKE_C_COMPILER $triplet-gcc)
		set(CMAKE_CXX_COMPILER $triplet-g++)
		set(CMAKE_AR $(command -v "$triplet-ar"))
		set(CMAKE_RANLIB $(command -v "$triplet-ranlib"))
		set(CMAKE_FIND_ROOT_PATH /usr/$triplet)
		set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
		set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
		set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
	EOF
	cross_meson=(--cross-file "$build/meson-cross.ini")
	cross_cmake=(-DCMAKE_TOOLCHAIN_FILE="$build/toolchain.cmake")
fi

# run NAME CMD...: one build step of library NAME, its output appended to
# NAME's log; on failure the log's tail is printed and the build stops.
run() {
	local name=$1; shift
	local logf=$build/logs/$name.log
	echo "+ $*" >> "$logf"
	if ! "$@" >> "$logf" 2>&1; then
		echo "libs.sh: $name: failed: $*" >&2
		echo "libs.sh: last lines of $logf:" >&2
		tail -n 60 "$logf" >&2
		die "$name: build failed for $arch (full log: $logf; build dir kept: $build)"
	fi
}

declare -A took=()
timed() {
	local name=$1 t0=$EPOCHREALTIME; shift
	log "$name: building (log: $build/logs/$name.log)"
	"$@"
	took[$name]=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	log "$name: done in ${took[$name]} s"
}

build_dav1d() {
	local b=$build/dav1d
	run dav1d meson setup "$b" "${srcdir[dav1d]}" "${cross_meson[@]}" \
		--prefix="$tmp" --libdir=lib --buildtype=release \
		--default-library=static -Db_staticpic=true \
		-Denable_tools=false -Denable_tests=false -Denable_examples=false -Denable_docs=false \
		-Dc_args="$cflags"
	run dav1d ninja -C "$b" -j "$jobs" install
}

build_svtav1() {
	local b=$build/svt-av1
	# Encoder library only: no decoder, no apps, no tests.
	run svt-av1 cmake -S "${srcdir[svt-av1]}" -B "$b" -G Ninja "${cross_cmake[@]}" \
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$tmp" -DCMAKE_INSTALL_LIBDIR=lib \
		-DBUILD_SHARED_LIBS=OFF -DBUILD_APPS=OFF -DBUILD_DEC=OFF -DBUILD_ENC=ON -DBUILD_TESTING=OFF \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DREPRODUCIBLE_BUILDS=ON \
		-DCMAKE_C_FLAGS="$cflags" -DCMAKE_CXX_FLAGS="$cflags"
	run svt-av1 cmake --build "$b" -j "$jobs"
	run svt-av1 cmake --install "$b"
}

build_x264() {
	local b=$build/x264 cross=()
	[ "$arch" = arm64 ] && cross=(--host="$triplet" --cross-prefix="$triplet-")
	mkdir -p "$b"
	# Library only: no command-line tool and none of its input libraries.
	run x264 env -C "$b" CFLAGS="$cflags" "${srcdir[x264]}/configure" "${cross[@]}" \
		--prefix="$tmp" --libdir="$tmp/lib" --enable-static --enable-pic \
		--disable-cli --disable-opencl --disable-avs --disable-swscale --disable-lavf \
		--disable-ffms --disable-gpac --disable-lsmash
	run x264 make -C "$b" -j "$jobs"
	run x264 make -C "$b" install
}

build_libvpx() {
	local b=$build/libvpx target=x86_64-linux-gcc cross=()
	[ "$arch" = arm64 ] && target=arm64-linux-gcc cross=(CROSS="$triplet-")
	mkdir -p "$b"
	# VP8 and VP9 encoders only (FFmpeg's native decoders read VP8/VP9);
	# high bit depth and the size limit as Debian's own libvpx has them.
	run libvpx env -C "$b" "${cross[@]}" CFLAGS="$cflags" "${srcdir[libvpx]}/configure" \
		--target="$target" --prefix="$tmp" --libdir="$tmp/lib" \
		--enable-static --disable-shared --enable-pic \
		--enable-vp8-encoder --enable-vp9-encoder --disable-vp8-decoder --disable-vp9-decoder \
		--enable-vp9-highbitdepth --size-limit=16384x16384 \
		--disable-examples --disable-tools --disable-docs --disable-unit-tests \
		--disable-install-bins --disable-install-srcs
	run libvpx make -C "$b" -j "$jobs"
	run libvpx make -C "$b" install
}

build_ffmpeg() {
	local b=$build/ffmpeg cross=()
	[ "$arch" = arm64 ] && cross=(--enable-cross-compile --arch=aarch64 --target-os=linux --cross-prefix="$triplet-")
	mkdir -p "$b"
	run ffmpeg env -C "$b" "${srcdir[ffmpeg]}/configure" "${cross[@]}" \
		--prefix="$tmp" --libdir="$tmp/lib" --pkg-config=pkg-config --pkg-config-flags=--static \
		--enable-static --disable-shared --enable-pic --disable-debug \
		--disable-everything --disable-autodetect --disable-programs --disable-doc --disable-network \
		--enable-gpl --enable-libx264 --enable-libsvtav1 --enable-libdav1d --enable-libvpx \
		"${ffmpeg_components[@]}" \
		--extra-cflags="-I$tmp/include $cflags" --extra-ldflags="-L$tmp/lib"
	run ffmpeg make -C "$b" -j "$jobs"
	run ffmpeg make -C "$b" install
}

t_all=$EPOCHREALTIME
timed dav1d build_dav1d
timed svt-av1 build_svtav1
timed x264 build_x264
timed libvpx build_libvpx
timed ffmpeg build_ffmpeg

# .pc files: Requires.private, Libs.private and Cflags.private folded into
# Requires, Libs and Cflags (cgo asks for --libs, not --static --libs), and
# every path made relative to the .pc file's own directory.
for pc in "$tmp"/lib/pkgconfig/*.pc; do
	awk -v tmp="$tmp" '
		function rel(s,    at) { while ((at = index(s, tmp)) > 0) s = substr(s, 1, at - 1) "${pcfiledir}/../.." substr(s, at + length(tmp)); return s }
		function join(a, b, sep) { return a == "" ? b : (b == "" ? a : a sep b) }
		/^[A-Za-z.]+:/ {
			k = $0; sub(/:.*/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v)
			if (k ~ /^(Libs|Requires|Cflags)(\.private)?$/) {
				base = k; sub(/\.private$/, "", base)
				# public part first: -lavcodec before what it needs
				if (k == base) pub[base] = v; else priv[base] = v
				if (!(base in pos)) { pos[base] = n; lines[n++] = "\001" base }
				next
			}
		}
		{ lines[n++] = $0 }
		END {
			print "# Libs, Requires and Cflags carry their .private parts: cgo runs pkg-config --libs, not --static (release/libs.sh)."
			for (i = 0; i < n; i++) {
				l = lines[i]
				if (substr(l, 1, 1) == "\001") { b = substr(l, 2); print b ": " rel(join(pub[b], priv[b], b == "Requires" ? ", " : " ")) }
				else print rel(l)
			}
	}' "$pc" > "$pc.new"
	mv "$pc.new" "$pc"
done

# Nothing but static archives; nothing that names the temporary prefix or
# the build dir (the prefix is renamed, the build dir removed).
if find "$tmp" \( -name '*.so' -o -name '*.so.*' \) | grep -q .; then
	die "shared libraries were installed into $tmp: $(find "$tmp" \( -name '*.so' -o -name '*.so.*' \) | tr '\n' ' ')"
fi
if leaks=$(grep -rIlF -e "$tmp" -e "$build" "$tmp"); then
	die "installed files name the temporary prefix or build dir: $leaks"
fi

# Licences, for the release's notices.
copy_licences() {
	local name=$1; shift
	local d=$tmp/share/licenses/$name f
	mkdir -p "$d"
	for f in "$@"; do
		[ -f "${srcdir[$name]}/$f" ] || die "$name: licence file $f not found in ${srcdir[$name]}"
		cp "${srcdir[$name]}/$f" "$d/"
	done
	# Debian's copyright file lists the sources' third-party parts too.
	cp "${srcdir[$name]}/debian/copyright" "$d/debian-copyright"
}
(cd "${srcdir[ffmpeg]}" && ls COPYING.* LICENSE.md) > /dev/null || die "ffmpeg: COPYING.* or LICENSE.md missing in ${srcdir[ffmpeg]}"
copy_licences ffmpeg $(cd "${srcdir[ffmpeg]}" && ls COPYING.* LICENSE.md)
copy_licences x264 COPYING
copy_licences svt-av1 $(cd "${srcdir[svt-av1]}" && ls LICENSE*.md) PATENTS.md
copy_licences dav1d COPYING
copy_licences libvpx LICENSE PATENTS

# versions.txt: name and upstream version (the Debian version less its
# epoch, revision and +dfsg repack suffix).
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/libs.lock" | awk '{
	v = $3; sub(/^[0-9]+:/, "", v); sub(/-[^-]*$/, "", v); sub(/[+~]dfsg[0-9]*$/, "", v); print $1, v }' > "$tmp/versions.txt"

total=$(awk -v a="$t_all" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
{
	for name in dav1d svt-av1 x264 libvpx ffmpeg; do echo "$name ${took[$name]}"; done
	echo "total $total"
} > "$build/logs/times.txt"
log "$arch: all libraries built in $total s ($(du -sh "$tmp" | cut -f1))"

date -u +%Y-%m-%dT%H:%M:%SZ > "$tmp/$stampname"
rm -rf "$prefix" # only ever an incomplete one here: the stamp was checked under the lock
mv -T "$tmp" "$prefix"
# The objects go; the logs stay (with the times) for whoever looks later.
find "$build" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
echo "$prefix"
