#!/bin/bash
# One Kubernetes node as ovn-kubernetes renders it into OVN 25.03, with ACL
# sampling on, inside the lab guest. Used by test/ovn/ovn-acl.lab.test.ts,
# test/cli/watch.lab.test.ts and `npm run demo`, so all exercise the same scenario.
#
# usage: ovnk-node.sh up    start OVS + OVN, build the node, print its JSON description
#        (once: a second call finds the node built and only describes it)
# OVNK_NODE_COLLECTOR=no leaves the OVS Flow_Sample_Collector_Set out, as on a
# real node before anyone sets up observability (ovn-psample watch
# --add-ovs-collector makes it).
#
# Shape (names, port groups, ACL tiers, priorities and external_ids follow
# ovn-kubernetes's docs/design/acls.md):
#   logical switch lab-node (the node switch), pods = network namespaces whose
#   eth0 is a veth bound to a logical switch port named NAMESPACE_POD, with
#   external_ids namespace=NAMESPACE pod=true as ovn-kubernetes writes them:
#     shop_frontend 10.244.0.3, shop_backend 10.244.0.4, shop_db 10.244.0.5,
#     tenant-b_client 10.244.0.6, and ext_host 172.18.0.10 standing in for a
#     destination outside the cluster.
#   tier 1: AdminNetworkPolicy pass-monitoring passes tenant-b_client -> shop pods
#   tier 2: NetworkPolicy shop:allow-frontend allows frontend -> backend;
#           namespace shop's ingress default deny drops everything else to
#           backend and db; EgressFirewall shop drops shop -> 172.18.0.0/16.
#   Sampling_App drop=1 acl-new=2 acl-est=3, Sample_Collector set_id 42,
#   OVS Flow_Sample_Collector_Set 42 -> psample group 42.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# Daemons started from here inherit the working directory: keep them off the payload disk.
cd /

NODE=lab-node
SET_ID=42
PSAMPLE_GROUP=42
APP_DROP=1 APP_NEW=2 APP_EST=3
POINT_NETPOL_ALLOW=1001 POINT_DEFAULT_DENY=1002 POINT_ANP_PASS=1003 POINT_EGRESS_FIREWALL=1004
CONTROLLER=default-network-controller

# name ip mac namespace
PODS=(
    "shop_frontend 10.244.0.3 0a:58:0a:f4:00:03 shop"
    "shop_backend 10.244.0.4 0a:58:0a:f4:00:04 shop"
    "shop_db 10.244.0.5 0a:58:0a:f4:00:05 shop"
    "tenant-b_client 10.244.0.6 0a:58:0a:f4:00:06 tenant-b"
    "ext_host 172.18.0.10 0a:58:ac:12:00:0a external"
)

start_ovn() {
    "$HERE/ovs-start.sh"
    modprobe veth
    mkdir -p /var/log/ovn /run/ovn /var/lib/ovn
    /usr/share/ovn/scripts/ovn-ctl start_northd --no-monitor >/dev/null
    ovs-vsctl set Open_vSwitch . external-ids:system-id="$NODE" \
        external-ids:ovn-remote=unix:/run/ovn/ovnsb_db.sock \
        external-ids:ovn-encap-type=geneve external-ids:ovn-encap-ip=127.0.0.1
    /usr/share/ovn/scripts/ovn-ctl start_controller --no-monitor >/dev/null
    for _ in $(seq 600); do ovs-vsctl br-exists br-int 2>/dev/null && return; sleep 0.1; done
    echo "ovn-controller did not create br-int within 60 s" >&2
    exit 1
}

add_pod() {
    local name=$1 ip=$2 mac=$3 namespace=$4 port
    port="v${name//[^a-z0-9]/}"
    port=${port:0:15}
    ovn-nbctl lsp-add "$NODE" "$name" -- lsp-set-addresses "$name" "$mac $ip"
    if [ "$namespace" != external ]; then
        ovn-nbctl set Logical_Switch_Port "$name" external_ids:namespace="$namespace" external_ids:pod=true
    fi
    ip netns add "$name"
    ip -n "$name" link set lo up
    ip link add "$port" type veth peer name eth0 netns "$name"
    ip -n "$name" link set eth0 address "$mac"
    ip -n "$name" addr add "$ip/24" dev eth0
    ip -n "$name" link set eth0 up
    # ovn-kubernetes routes off-cluster traffic through the node's gateway
    # router; one switch is enough to reach the ACL stages, so routes are on-link.
    if [ "${ip%%.*}" = 10 ]; then
        ip -n "$name" route add 172.18.0.0/16 dev eth0
    else
        ip -n "$name" route add 10.244.0.0/16 dev eth0
    fi
    ip link set "$port" up
    ovs-vsctl add-port br-int "$port" -- set Interface "$port" external_ids:iface-id="$name"
}

# ext OWNER_TYPE NAME ID [KEY=VALUE...]: appends ovn-kubernetes's external_ids to TXN.
ext() {
    TXN+=("external_ids:\"k8s.ovn.org/owner-controller\"=$CONTROLLER"
          "external_ids:\"k8s.ovn.org/owner-type\"=$1"
          "external_ids:\"k8s.ovn.org/name\"=\"$2\""
          "external_ids:\"k8s.ovn.org/id\"=\"$CONTROLLER:$3\"")
    shift 3
    local kv
    for kv in "$@"; do TXN+=("external_ids:${kv%%=*}=\"${kv#*=}\""); done
}

build_node() {
    ovn-nbctl ls-add "$NODE" -- set Logical_Switch "$NODE" other_config:subnet=10.244.0.0/24
    local pod
    for pod in "${PODS[@]}"; do
        # shellcheck disable=SC2086
        add_pod $pod
    done
    ovn-nbctl create Sampling_App type=drop id=$APP_DROP >/dev/null
    ovn-nbctl create Sampling_App type=acl-new id=$APP_NEW >/dev/null
    ovn-nbctl create Sampling_App type=acl-est id=$APP_EST >/dev/null
    ovn-nbctl create Address_Set name=a_shop_v4 'addresses="10.244.0.3","10.244.0.4","10.244.0.5"' \
        'external_ids:"k8s.ovn.org/owner-type"=Namespace' 'external_ids:"k8s.ovn.org/name"=shop' >/dev/null
    ovn-nbctl pg-add a_shop_ingressDefaultDeny shop_backend shop_db
    ovn-nbctl pg-add a_shop_allow_frontend shop_backend
    ovn-nbctl pg-add a_anp_pass_monitoring shop_frontend shop_backend shop_db

    # A Sample is not a root row: each is created in the transaction of the ACL
    # that references it, and the ACL is attached to a port group or switch in
    # that same transaction, or OVSDB garbage-collects them.
    TXN=(-- --id=@c create Sample_Collector id=1 name=ovnk-observability probability=65535 set_id=$SET_ID)

    TXN+=(-- --id=@s_np create Sample collectors=@c metadata=$POINT_NETPOL_ALLOW
          -- --id=@np create ACL direction=to-lport priority=1001 tier=2 action=allow-related
          'name="NP:shop:allow-frontend:Ingress:0"'
          'match="outport == @a_shop_allow_frontend && ip4.src == 10.244.0.3"'
          sample_new=@s_np sample_est=@s_np)
    ext NetworkPolicy shop:allow-frontend "NetworkPolicy:shop:allow-frontend:Ingress:0:-1:-1" \
        direction=Ingress gress-index=0 ip-block-index=-1 port-policy-index=-1
    TXN+=(-- add Port_Group a_shop_allow_frontend acls @np)

    TXN+=(-- --id=@s_dd create Sample collectors=@c metadata=$POINT_DEFAULT_DENY
          -- --id=@dd create ACL direction=to-lport priority=1000 tier=2 action=drop
          'name="NP:shop:Ingress"' 'match="outport == @a_shop_ingressDefaultDeny"' sample_new=@s_dd)
    ext NetpolNamespace shop "NetpolNamespace:shop:Ingress:defaultDeny" direction=Ingress type=defaultDeny
    TXN+=(-- --id=@arp create ACL direction=to-lport priority=1001 tier=2 action=allow
          'name="NP:shop:Ingress"' 'match="outport == @a_shop_ingressDefaultDeny && (arp || nd)"')
    ext NetpolNamespace shop "NetpolNamespace:shop:Ingress:arpAllow" direction=Ingress type=arpAllow
    TXN+=(-- add Port_Group a_shop_ingressDefaultDeny acls @dd @arp)

    TXN+=(-- --id=@s_anp create Sample collectors=@c metadata=$POINT_ANP_PASS
          -- --id=@anp create ACL direction=to-lport priority=29000 tier=1 action=pass
          'name="ANP:pass-monitoring:Ingress:0"'
          'match="outport == @a_anp_pass_monitoring && ip4.src == 10.244.0.6"' sample_new=@s_anp)
    ext AdminNetworkPolicy pass-monitoring "AdminNetworkPolicy:pass-monitoring:Ingress:0:None" \
        direction=Ingress gress-index=0 port-policy-protocol=None
    TXN+=(-- add Port_Group a_anp_pass_monitoring acls @anp)

    TXN+=(-- --id=@s_ef create Sample collectors=@c metadata=$POINT_EGRESS_FIREWALL
          -- --id=@ef create ACL direction=to-lport priority=10000 tier=2 action=drop
          'name="EF:shop:10000"' 'match="(ip4.dst == 172.18.0.0/16) && ip4.src == $a_shop_v4"' sample_new=@s_ef)
    ext EgressFirewall shop "EgressFirewall:shop:10000" rule-idx=0
    TXN+=(-- add Logical_Switch "$NODE" acls @ef)

    ovn-nbctl "${TXN[@]}" >/dev/null

    if [ "${OVNK_NODE_COLLECTOR:-yes}" != no ]; then
        ovs-vsctl -- --id=@br get Bridge br-int \
            -- create Flow_Sample_Collector_Set bridge=@br id=$SET_ID local_group_id=$PSAMPLE_GROUP >/dev/null
    fi
    wait_for_node
}

# ovn-controller has installed the flows of the current northbound state, and every pod's port is up.
wait_for_node() {
    ovn-nbctl --timeout=120 --wait=hv sync
    for pod in "${PODS[@]}"; do
        pod=${pod%% *}
        ovn-nbctl --timeout=120 wait-until Logical_Switch_Port "$pod" up=true
    done
}

describe() {
    local key pods="" pod name ip mac ns
    key=$(ovn-sbctl --bare --columns=tunnel_key find Datapath_Binding external_ids:name="$NODE")
    for pod in "${PODS[@]}"; do
        read -r name ip mac ns <<<"$pod"
        pods+="${pods:+,}{\"port\":\"$name\",\"netns\":\"$name\",\"namespace\":\"$ns\",\"ip\":\"$ip\",\"mac\":\"$mac\"}"
    done
    cat <<JSON
{"node":"$NODE","datapathKey":$key,"psampleGroup":$PSAMPLE_GROUP,"collectorSetId":$SET_ID,
 "northbound":"unix:/run/ovn/ovnnb_db.sock","southbound":"unix:/run/ovn/ovnsb_db.sock",
 "apps":{"drop":$APP_DROP,"aclNew":$APP_NEW,"aclEst":$APP_EST},
 "points":{"netpolAllow":$POINT_NETPOL_ALLOW,"defaultDeny":$POINT_DEFAULT_DENY,"anpPass":$POINT_ANP_PASS,"egressFirewall":$POINT_EGRESS_FIREWALL},
 "pods":[$pods]}
JSON
}

case ${1:-} in
    up)
        if ! ovn-nbctl --timeout=5 ls-list 2>/dev/null | grep -q "($NODE)"; then
            start_ovn >&2
            build_node >&2
        else
            # A file before this one may have restarted Open vSwitch (psample-reload unloads the
            # module under it): the node serves again once ovn-controller has put its flows back.
            "$HERE/ovs-start.sh" >&2
            wait_for_node >&2
        fi
        describe
        ;;
    *)
        sed -n '2,12p' "$0" >&2
        exit 2
        ;;
esac
