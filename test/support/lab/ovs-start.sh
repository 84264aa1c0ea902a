#!/bin/bash
# Starts ovsdb-server and ovs-vswitchd on the kernel datapath inside the lab
# guest, once: a second call finds them running and returns at once. The guest
# has no systemd, so the daemons are started by hand like ovs-ctl would.
set -euo pipefail
# Daemons inherit the working directory: keep them off the payload disk.
cd /
if pgrep -x ovs-vswitchd >/dev/null; then
    exit 0
fi
modprobe openvswitch
modprobe psample
mkdir -p /etc/openvswitch /run/openvswitch /var/log/openvswitch
rm -f /etc/openvswitch/conf.db
ovsdb-tool create /etc/openvswitch/conf.db /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server /etc/openvswitch/conf.db --remote=punix:/run/openvswitch/db.sock \
    --pidfile --detach --log-file=/var/log/openvswitch/ovsdb-server.log
ovs-vsctl --no-wait init
ovs-vswitchd --pidfile --detach --log-file=/var/log/openvswitch/ovs-vswitchd.log
ovs-vsctl --timeout=60 wait-until Open_vSwitch . next_cfg=0 >/dev/null 2>&1 || true
