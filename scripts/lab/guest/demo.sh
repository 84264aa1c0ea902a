#!/bin/bash
# `npm run demo` inside the guest: an ovn-kubernetes-shaped node with ACL
# sampling on, the project's library streaming the live psample samples with
# the policy that decided each one, and pod traffic that policies allow and
# deny. The exit status is the stream's.
set -u
project=/lab/project
support=$project/test/lab/support

say() { printf '\n== %s\n' "$*"; }

say "starting Open vSwitch 3.5 and OVN 25.03; building node 'lab-node' as ovn-kubernetes would (20-60 s under emulation)"
if ! bash "$support/ovnk-node.sh" up >/tmp/ovnk-node.json 2>/tmp/ovnk-node.log; then
    cat /tmp/ovnk-node.log
    exit 1
fi

say "streaming live samples of psample group 42, decoded and resolved through the OVN databases"
rm -f /tmp/demo-stream.ready
node "$project/scripts/lab/guest/demo-stream.js" 42 unix:/run/ovn/ovnnb_db.sock unix:/run/ovn/ovnsb_db.sock \
    /tmp/demo-stream.ready &
listener=$!
# Loading node and the addon under TCG takes seconds: the traffic waits until
# the stream has joined the group, so no sample is missed.
for _ in $(seq 600); do
    [ -e /tmp/demo-stream.ready ] && break
    kill -0 "$listener" 2>/dev/null || exit 1
    sleep 0.1
done

step() {  # title netns destination
    say "$1"
    ip netns exec "$2" ping -c 3 -i 0.5 -W 1 "$3" >/dev/null
    sleep 1
}
step "pod shop/frontend pings pod shop/backend (NetworkPolicy shop/allow-frontend selects backend)" \
    shop_frontend 10.244.0.4
step "pod shop/frontend pings pod shop/db (no policy allows anything into db)" shop_frontend 10.244.0.5
step "pod tenant-b/client pings pod shop/backend (AdminNetworkPolicy pass-monitoring covers it)" \
    tenant-b_client 10.244.0.4
step "pod shop/frontend pings 172.18.0.10, outside the cluster (namespace shop has an EgressFirewall)" \
    shop_frontend 172.18.0.10

say "stopping the stream"
kill -TERM "$listener"
wait "$listener"
