# SPDX-License-Identifier: GPL-2.0
# Shared by the scripts/host/* build scripts: paths, dependencies, and the
# cached extraction of linux-source-6.12.  Source it; it sets -euo pipefail.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
KVER=6.12.117+deb12-amd64
KDIR=/usr/src/linux-headers-$KVER
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
CPU_LOCK=/tmp/pvlock-cpu.lock
HOST_BUILD=$BUILD/host
SRC=$HOST_BUILD/linux-source-6.12
JOBS=${JOBS:-$(nproc)}

log() { echo "${0##*/}: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# install_deps PKG...: apt-get install the packages that are not installed.
install_deps() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# extract_source: $SRC is the pristine linux-source-6.12 (cached by stamp).
extract_source() {
	local stamp
	[ -f "$SRC_TAR" ] || die "$SRC_TAR missing (package linux-source-6.12)"
	stamp="$(stat -c '%s %Y' "$SRC_TAR")"
	[ "$(cat "$SRC/.pvlock-extracted" 2>/dev/null)" = "$stamp" ] && return 0
	log "extracting $SRC_TAR into $HOST_BUILD"
	rm -rf "$SRC"
	mkdir -p "$HOST_BUILD"
	flock "$CPU_LOCK" tar -C "$HOST_BUILD" -xf "$SRC_TAR"
	[ -d "$SRC/arch/x86/kvm" ] || die "unexpected layout in $SRC_TAR"
	echo "$stamp" > "$SRC/.pvlock-extracted"
}
