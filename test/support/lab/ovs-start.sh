#!/bin/bash
# Starts ovsdb-server and ovs-vswitchd on the kernel datapath inside the lab
# guest: a call that finds them running returns at once. The guest
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
# A restart (a test that reloads psample stops Open vSwitch) keeps the database: the bridges and
# ovn-controller's settings of the OVN node (ovnk-node.sh) the files after it still use.
[ -e /etc/openvswitch/conf.db ] ||
    ovsdb-tool create /etc/openvswitch/conf.db /usr/share/openvswitch/vswitch.ovsschema
# By its pidfile: OVN's northbound and southbound databases run ovsdb-servers too.
ovs-appctl -t ovsdb-server version >/dev/null 2>&1 ||
    ovsdb-server /etc/openvswitch/conf.db --remote=punix:/run/openvswitch/db.sock \
        --pidfile --detach --log-file=/var/log/openvswitch/ovsdb-server.log
ovs-vsctl --no-wait init
ovs-vswitchd --pidfile --detach --log-file=/var/log/openvswitch/ovs-vswitchd.log
# Waits until ovs-vswitchd has applied the database (a restarted one's next_cfg is not 0).
ovs-vsctl --timeout=60 init >/dev/null 2>&1 || true
