#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Proves the Dockerfile on a pristine Debian bookworm without any registry:
#   1. debootstrap a minbase bookworm tree into a cache folder outside the
#      repo (reused when present), with the host's apt sources and Acquire
#      settings, so apt inside reaches the mirror the way the host does;
#   2. podman import it as the base image (reused when present);
#   3. podman build the Dockerfile FROM that image (the build runs
#      ./faultline test, so a broken tree fails here);
#   4. podman run the image without a network: a replay of every corpus
#      Program against its expect lines, or (--verify) the default command.
# Prints one PASS/FAIL line per step with its time; exit 0 when all pass,
# 1 when a step fails, 2 on bad usage or without root.
#
#   tools/podman_check.sh [--fresh] [--cache DIR] [--verify]
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/faultline-podman
FRESH=0
VERIFY=0
BASE_IMAGE=localhost/faultline-bookworm-base:latest
IMAGE=localhost/faultline:check

say() { printf '[podman-check] %s\n' "$*"; }
usage() { say "usage: tools/podman_check.sh [--fresh] [--cache DIR] [--verify]"; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--fresh) FRESH=1 ;;
	--verify) VERIFY=1 ;;
	--cache) [ $# -ge 2 ] || usage; CACHE=$2; shift ;;
	-h | --help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) say "unknown option '$1'"; usage ;;
	esac
	shift
done
case "$CACHE" in /*) ;; *) CACHE=$PWD/$CACHE ;; esac
case "$CACHE/" in "$PWD"/*) say "the cache must live outside the repository (podman would copy it into the image)"; exit 2 ;; esac

if [ "$(id -u)" -ne 0 ]; then
	say "skipped: needs root (debootstrap and rootful podman)"
	exit 2
fi

# Tools; the same apt-get route ./faultline uses for everything else.
missing=()
for p in podman buildah runc debootstrap uidmap; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	say "installing: ${missing[*]}"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
		{ say "FAIL: could not install ${missing[*]}"; exit 1; }
fi

mkdir -p "$CACHE"
ROOTFS=$CACHE/bookworm-rootfs
LOG=$CACHE/build.log

# This VM: cgroup v1 hybrid (crun refuses it, runc works) and no
# CAP_SYS_RESOURCE: container rlimits must stay well below the hard limits
# (nproc 48182 of a hard 96365 was refused, 20000 worked), so take the
# smaller of half the hard limit and a modest cap. A private
# containers.conf changes nothing system-wide.
small_limit() {  # HARD CAP
	local n=$1; [ "$n" = unlimited ] && n=$2
	n=$((n / 2)); echo $((n < $2 ? n : $2))
}
NOFILE=$(small_limit "$(ulimit -Hn)" 10000)
NPROC=$(small_limit "$(ulimit -Hu)" 9000)
cat >"$CACHE/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$NOFILE:$NOFILE", "nproc=$NPROC:$NPROC"]
netns = "none"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF=$CACHE/containers.conf
ULIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")

FAILED=0
pass() { say "PASS $1 ($(($SECONDS - $2)) s)"; }
fail() { say "FAIL $1 ($(($SECONDS - $2)) s)${3:+: $3}"; FAILED=1; }
total=$SECONDS

if [ $FRESH -eq 1 ]; then
	say "--fresh: dropping $ROOTFS, $BASE_IMAGE and $IMAGE"
	rm -rf "$ROOTFS"
	podman image rm -f "$IMAGE" "$BASE_IMAGE" >/dev/null 2>&1 || true
fi

# 1. The debootstrap tree, mirrored from where the host's apt goes.
host_mirror() {
	local m
	m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian}"
}

# The host's Debian sources and its Acquire settings (proxy, Valid-Until on
# a snapshot mirror), nothing else: the container fetches what the host would.
copy_apt_config() {  # ROOT
	local f
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		cp /etc/apt/sources.list.d/debian.sources "$1/etc/apt/sources.list.d/"
		rm -f "$1/etc/apt/sources.list"
	elif grep -q '^deb ' /etc/apt/sources.list 2>/dev/null; then
		grep '^deb ' /etc/apt/sources.list >"$1/etc/apt/sources.list"
	fi
	for f in /etc/apt/apt.conf.d/*; do
		grep -q '^[[:space:]]*Acquire::' "$f" 2>/dev/null && cp "$f" "$1/etc/apt/apt.conf.d/"
	done
	return 0
}

t=$SECONDS
if [ -f "$ROOTFS/.complete" ]; then
	pass "debootstrap: reused $ROOTFS" $t
else
	mirror=$(host_mirror)
	say "debootstrap --variant=minbase bookworm from $mirror (about a minute)"
	rm -rf "$ROOTFS.tmp"
	if nice debootstrap --variant=minbase bookworm "$ROOTFS.tmp" "$mirror" >"$CACHE/debootstrap.log" 2>&1; then
		copy_apt_config "$ROOTFS.tmp"
		rm -rf "$ROOTFS" && mv "$ROOTFS.tmp" "$ROOTFS" && touch "$ROOTFS/.complete"
		pass "debootstrap: $(du -sm "$ROOTFS" | cut -f1) MB, Debian $(cat "$ROOTFS/etc/debian_version")" $t
	else
		tail -5 "$CACHE/debootstrap.log"
		fail debootstrap $t "see $CACHE/debootstrap.log"
		exit 1
	fi
fi

# 2. The base image. Re-importing would make a new image id and throw away
# the build cache, so an existing one is kept until --fresh.
t=$SECONDS
if podman image exists "$BASE_IMAGE" && [ "$(podman image inspect -f '{{.Created.Unix}}' "$BASE_IMAGE")" -ge "$(stat -c %Y "$ROOTFS/.complete")" ]; then
	pass "import: reused $BASE_IMAGE" $t
elif tar -C "$ROOTFS" --exclude=./.complete -c . | podman import - "$BASE_IMAGE" >/dev/null; then
	pass "import: $BASE_IMAGE" $t
else
	fail import $t
	exit 1
fi

# 3. The image. The host network only lets apt reach the mirror (the
# default CNI bridge needs more than this VM offers); nothing is pulled.
t=$SECONDS
build_args=(--pull=never --network=host --runtime runc "${ULIMITS[@]}" --build-arg "BASE=$BASE_IMAGE"
	--label org.faultline.check=1 -t "$IMAGE")
[ $FRESH -eq 1 ] && build_args+=(--no-cache)
say "podman build (runs ./faultline test inside; log: $LOG)"
if nice podman build "${build_args[@]}" . 2>&1 | tee "$LOG"; then
	pass "build: $IMAGE, $(podman image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%d MB", $1 / 1e6}')" $t
	grep -E 'tests passed|test finished' "$LOG" | sed 's/^/[podman-check]   /' || true
	# The image this run replaced (untagged now) and its layers: GBs each.
	podman image prune -f --filter label=org.faultline.check=1 >/dev/null || true
else
	fail build $t "see $LOG"
	exit 1
fi

# 4. The image at run time, with no network: nothing may be fetched then.
t=$SECONDS
if [ $VERIFY -eq 1 ]; then
	run=(./faultline verify)
else
	run=(sh -c './faultline replay --check-expect --quiet corpora/programs/*.fl')
fi
say "podman run --network=none $IMAGE ${run[*]}"
if nice podman run --rm --network=none "${ULIMITS[@]}" "$IMAGE" "${run[@]}" >"$CACHE/run.log" 2>&1; then
	[ $VERIFY -eq 1 ] && tail -3 "$CACHE/run.log" | sed 's/^/[podman-check]   /'
	[ $VERIFY -eq 1 ] || say "  $(grep -c '^== ' "$CACHE/run.log") Programs replayed, every verdict as their expect lines say"
	pass "run: ${run[*]}" $t
else
	tail -20 "$CACHE/run.log"
	fail "run: ${run[*]}" $t "see $CACHE/run.log"
fi

if [ $FAILED -eq 0 ]; then
	say "PASS docker-check in $((SECONDS - total)) s"
else
	say "FAIL docker-check in $((SECONDS - total)) s"
	exit 1
fi
