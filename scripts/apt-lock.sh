# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by every script of the project that runs apt (scripts/install-deps, the
# deb-src and source fetches of scripts/qemu/build-qemu and scripts/host/lib.sh, the
# kexec-tools fetch of scripts/guest/build-initramfs).
#
# apt_lock: take the project's apt lock on fd 9 and hold it until the calling shell or
# subshell exits. apt's own locks are taken per command and not waited for by
# `apt-get update`, so two checkouts installing at once (two CI clones on one fresh
# machine) saw "Could not get lock /var/lib/apt/lists/lock" and failed; under this lock
# the second one waits, then finds the packages, lists and deb-src entries the first one
# left. APT_WAIT_OPT makes apt itself wait for a dpkg that someone else runs.
PVLOCK_APT_LOCK=${PVLOCK_APT_LOCK:-/tmp/pvlock-apt.lock}
PVLOCK_APT_WAIT=${PVLOCK_APT_WAIT:-1800}
# shellcheck disable=SC2034 # used by the scripts that source this file
APT_WAIT_OPT="-o DPkg::Lock::Timeout=$PVLOCK_APT_WAIT"

apt_lock() {
	exec 9>>"$PVLOCK_APT_LOCK" || {
		echo "apt-lock: cannot open $PVLOCK_APT_LOCK" >&2
		return 1
	}
	flock -n 9 && return 0
	echo "apt-lock: another pvlock apt run holds $PVLOCK_APT_LOCK; waiting (up to ${PVLOCK_APT_WAIT}s)" >&2
	flock -w "$PVLOCK_APT_WAIT" 9 && return 0
	echo "apt-lock: $PVLOCK_APT_LOCK still held after ${PVLOCK_APT_WAIT}s; giving up" >&2
	return 1
}

# apt_download PKG DIR: PKG's .deb (PKG may be name=version) fetched into DIR by
# apt-get download under the project's apt lock; installs nothing. When the lists do
# not name it (a fresh machine, or a version the archive has moved to since the last
# update) it tries once more after an apt-get update. apt's output is in DIR/apt.log;
# the status is apt's.
apt_download() {
	(
		apt_lock || exit 1
		cd "$2" || exit 1
		apt-get download -q "$1" >apt.log 2>&1 && exit 0
		apt-get update -qq >>apt.log 2>&1 || true
		apt-get download -q "$1" >>apt.log 2>&1
	)
}
