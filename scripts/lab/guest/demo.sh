#!/bin/bash
# `npm run demo` inside the guest: an ovn-kubernetes-shaped node with ACL
# sampling on but no OVS collector set yet, `ovn-psample watch
# --add-ovs-collector` showing one line per packet with its verdict chain and
# pods, and pod traffic that policies allow and deny. The exit status is the
# watch's.
set -u
project=/lab/project
support=$project/test/support/lab

say() { printf '\n== %s\n' "$*"; }

say "starting Open vSwitch 3.5 and OVN 25.03; building node 'lab-node' as ovn-kubernetes would (20-60 s under emulation)"
if ! OVNK_NODE_COLLECTOR=no bash "$support/ovnk-node.sh" up >/tmp/ovnk-node.json 2>/tmp/ovnk-node.log; then
    cat /tmp/ovnk-node.log
    exit 1
fi

say "ovn-psample watch --add-ovs-collector: makes OVS send OVN's samples to psample, decodes them through the OVN databases"
node "$project/dist/cli/main.js" watch --add-ovs-collector --log-format text 2>/tmp/watch.log &
watch=$!
# Loading node and the addon under TCG takes seconds: the traffic waits until
# the watch has joined the group, so no sample is missed.
for _ in $(seq 600); do
    grep -q 'listening' /tmp/watch.log 2>/dev/null && break
    kill -0 "$watch" 2>/dev/null || { cat /tmp/watch.log; exit 1; }
    sleep 0.1
done
cat /tmp/watch.log

step() {  # title netns destination
    say "$1"
    ip netns exec "$2" ping -c 3 -i 0.5 -W 1 "$3" >/dev/null
    sleep 1
}
step "pod shop/frontend pings pod shop/backend (NetworkPolicy shop/allow-frontend selects backend)" \
    shop_frontend 10.244.0.4
step "pod shop/frontend pings pod shop/db (no policy allows anything into db)" shop_frontend 10.244.0.5
step "pod tenant-b/client pings pod shop/backend (AdminNetworkPolicy pass-monitoring delegates, then namespace isolation)" \
    tenant-b_client 10.244.0.4
step "pod shop/frontend pings 172.18.0.10, outside the cluster (namespace shop has an EgressFirewall)" \
    shop_frontend 172.18.0.10

say "stopping the watch (as Ctrl-C would): it removes its collector set and sums up"
kill -INT "$watch"
wait "$watch"
rc=$?
sed '1,/listening/d' /tmp/watch.log
say "collector sets left on br-int: $(ovs-vsctl --bare --columns=id list Flow_Sample_Collector_Set | tr '\n' ' ')(none expected)"
exit "$rc"
