# SPDX-License-Identifier: GPL-2.0
# Shared by the scripts/host/* build scripts: paths, dependencies, and the
# cached extraction of linux-source-6.12.  Source it; it sets -euo pipefail.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
KVER=6.12.117+deb12-amd64
KDIR=/usr/src/linux-headers-$KVER
# The installed linux-source-6.12 (the guest kernel builds from it, whatever its point
# release); source_tarball() picks the one the KVM modules are built from.
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
CPU_LOCK=/tmp/pvlock-cpu.lock
HOST_BUILD=$BUILD/host
SRC=$HOST_BUILD/linux-source-6.12
JOBS=${JOBS:-$(nproc)}
. "$TOP/scripts/apt-lock.sh"

log() { echo "${0##*/}: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# install_deps PKG...: the project's installer (scripts/install-deps), for the packages not
# installed yet.
install_deps() {
	"$TOP/scripts/install-deps" "$@" >/dev/null || die "could not install $*"
}

# source_tarball: set SRC_TAR to the linux-source-6.12 tarball of the very Debian version of
# the kernel the modules load into ($KVER, whose headers they are built against). Debian's
# security archive moves linux-source-6.12 to each new point release, while L1 stays on
# $KVER: KVM built from 6.12.118's source against 6.12.117's headers does not compile (and
# would not be 6.12.117's KVM). When the installed package is another version, that
# version's .deb is fetched into $HOST_BUILD/src-deb (apt-get download; nothing is
# installed, the machine's own linux-source-6.12 stays as it is) and its tarball used.
source_tarball() {
	local want have dir=$HOST_BUILD/src-deb deb
	want=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER" 2>/dev/null) ||
		die "linux-headers-$KVER is not installed"
	have=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
	if [ "$have" = "$want" ]; then
		SRC_TAR=/usr/src/linux-source-6.12.tar.xz
		return 0
	fi
	SRC_TAR=$dir/$want/usr/src/linux-source-6.12.tar.xz
	[ -f "$SRC_TAR" ] && return 0
	log "linux-source-6.12 is ${have:-not installed}, the KVM modules need $want" \
		"($KVER's): fetching that version"
	rm -rf "$dir/$want" "$dir/tmp"
	mkdir -p "$dir/tmp"
	apt_download "linux-source-6.12=$want" "$dir/tmp" ||
		die "apt-get download linux-source-6.12=$want failed (is deb.debian.org's" \
			"bookworm-security in the apt sources? $dir/tmp/apt.log)"
	deb=$(ls "$dir"/tmp/linux-source-6.12_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || die "apt-get download gave no linux-source-6.12 .deb ($dir/tmp/apt.log)"
	mkdir -p "$dir/$want.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -C "$dir/$want.tmp" -x ./usr/src/linux-source-6.12.tar.xz ||
		die "no usr/src/linux-source-6.12.tar.xz in $deb"
	mv "$dir/$want.tmp" "$dir/$want"
	rm -rf "$dir/tmp"
}

# extract_source: $SRC is the pristine linux-source-6.12 of $KVER (cached by stamp).
extract_source() {
	local stamp
	source_tarball
	[ -f "$SRC_TAR" ] || die "$SRC_TAR missing (package linux-source-6.12)"
	stamp="$SRC_TAR $(stat -c '%s %Y' "$SRC_TAR")"
	[ "$(cat "$SRC/.pvlock-extracted" 2>/dev/null)" = "$stamp" ] && return 0
	log "extracting $SRC_TAR into $HOST_BUILD"
	rm -rf "$SRC"
	mkdir -p "$HOST_BUILD"
	flock "$CPU_LOCK" tar -C "$HOST_BUILD" -xf "$SRC_TAR"
	[ -d "$SRC/arch/x86/kvm" ] || die "unexpected layout in $SRC_TAR"
	echo "$stamp" > "$SRC/.pvlock-extracted"
}
