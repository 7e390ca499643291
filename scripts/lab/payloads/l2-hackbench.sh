# L2 guest workload for lab cells (runs as /lab-init.sh under busybox sh in L2).
# A short, bounded load on every vCPU: hackbench (rt-tests) when the image has it, else a
# shell busy loop per CPU.  Knobs from the kernel command line: lab.groups=G lab.loops=L.
groups=2 loops=30
for w in $(cat /proc/cmdline); do
	case $w in
	lab.groups=*) groups=${w#lab.groups=} ;;
	lab.loops=*) loops=${w#lab.loops=} ;;
	esac
done
dmesg | grep -E 'PV spinlocks|kvm-guest' || true
if command -v hackbench >/dev/null; then
	echo "workload: hackbench -g $groups -l $loops"
	hackbench -g "$groups" -l "$loops" || exit 1
else
	echo "workload: busy loop on $(nproc) cpus"
	i=0
	while [ $i -lt "$(nproc)" ]; do
		(n=0; while [ $n -lt $((loops * 1000)) ]; do n=$((n + 1)); done) &
		i=$((i + 1))
	done
	wait
fi
echo "workload: done"
