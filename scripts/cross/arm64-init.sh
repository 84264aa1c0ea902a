#!/usr/bin/busybox sh
# PID 1 of scripts/cross/arm64-kernel.sh's guest: load psample and tc's sampling, sample every
# packet on lo into group 5, read 3 samples with ovn-psample listen, power off.
/usr/bin/busybox --install -s /busybin
export PATH=/usr/sbin:/usr/bin:/busybin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "ARM64: kernel $(uname -r) $(uname -m)"
for m in psample act_sample cls_matchall sch_ingress; do insmod /mods/$m.ko || echo "ARM64: insmod $m failed"; done
ip link set lo up
# Full paths: busybox's shell runs its own applets (a tc without clsact) before searching PATH.
/usr/sbin/tc qdisc add dev lo clsact
/usr/sbin/tc filter add dev lo ingress matchall action sample rate 1 group 5
node /opt/ovn-psample/node_modules/ovn-psample/dist/cli/main.js listen --group 5 --count 3 --duration 120 --log-format json >/tmp/out.txt 2>/tmp/log.txt &
n=0
while ! grep -q listening /tmp/log.txt 2>/dev/null && [ $n -lt 90 ]; do sleep 1; n=$((n + 1)); done
echo "ARM64: listening after ${n} s"
ping -c 3 -i 0.5 127.0.0.1 >/dev/null
wait
echo "ARM64: listen exited"
cat /tmp/out.txt
grep -v '^{' /tmp/log.txt | sed 's/^/ARM64: /'
poweroff -f
