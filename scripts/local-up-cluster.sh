#!/usr/bin/env bash
# A local tkube cluster with plain shell: every process's flags in view and
# overridable by environment variables, all logs under one folder.
#
#   scripts/local-up-cluster.sh            # start; Ctrl-C stops everything
#   DATA_DIR=/tmp/c NODES=3 scripts/local-up-cluster.sh
#   ETCD_SERVERS=http://127.0.0.1:2379 scripts/local-up-cluster.sh
#
# Variables (defaults in brackets):
#   DATA_DIR [.tkube-sh]  NODES [1]  API_PORT [6443]  CM_PORT [10257]
#   ETCD_SERVERS []       LOG_DIR [$DATA_DIR/logs]    BUILD [1: npm run build first]
#   AUTHORIZATION_MODE [Node,RBAC]
#   APISERVER_FLAGS, CONTROLLER_MANAGER_FLAGS, NODEAGENT_FLAGS: extra flags for each component
set -euo pipefail
cd "$(dirname "$0")/.."

DATA_DIR=${DATA_DIR:-.tkube-sh}
NODES=${NODES:-1}
API_PORT=${API_PORT:-6443}
CM_PORT=${CM_PORT:-10257}
ETCD_SERVERS=${ETCD_SERVERS:-}
AUTHORIZATION_MODE=${AUTHORIZATION_MODE:-Node,RBAC}
LOG_DIR=${LOG_DIR:-$DATA_DIR/logs}
BUILD=${BUILD:-1}
APISERVER_FLAGS=${APISERVER_FLAGS:-}
CONTROLLER_MANAGER_FLAGS=${CONTROLLER_MANAGER_FLAGS:-}
NODEAGENT_FLAGS=${NODEAGENT_FLAGS:-}

if [ "$BUILD" = 1 ]; then
  bash scripts/setup.sh --quiet
  npm run build --silent
fi
mkdir -p "$DATA_DIR" "$LOG_DIR"
CERT_DIR=$DATA_DIR/apiserver/certs
KUBECONFIG_PATH=$DATA_DIR/kubeconfig
SERVER=https://127.0.0.1:$API_PORT
PIDS=()

cleanup() {
  echo "Stopping: ${PIDS[*]:-nothing}"
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill -TERM "${PIDS[$i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

storage_flags=()
if [ -n "$ETCD_SERVERS" ]; then storage_flags=(--etcd-servers "$ETCD_SERVERS"); fi

set -x
# The V8 flags tkube's launcher gives the apiserver (shared/cluster/process.ts, V8_FLAGS).
node --max-semi-space-size=32 dist/cmd/apiserver.js \
  --secure-port "$API_PORT" \
  --bind-address 127.0.0.1 \
  --data-dir "$DATA_DIR/apiserver/data" \
  --cert-dir "$CERT_DIR" \
  --write-kubeconfig "$KUBECONFIG_PATH" \
  --kubelet-preferred-address-types InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP \
  --authorization-mode "$AUTHORIZATION_MODE" \
  "${storage_flags[@]}" $APISERVER_FLAGS >"$LOG_DIR/apiserver.log" 2>&1 &
{ set +x; } 2>/dev/null
PIDS+=($!)

echo "Waiting for the apiserver's /readyz ..."
for _ in $(seq 1 300); do
  if [ -f "$KUBECONFIG_PATH" ] && kubectl --kubeconfig "$KUBECONFIG_PATH" get --raw /readyz >/dev/null 2>&1; then break; fi
  sleep 0.2
done
kubectl --kubeconfig "$KUBECONFIG_PATH" get --raw /readyz >/dev/null

node dist/cmd/tkube.js credentials --cert-dir "$CERT_DIR" --server "$SERVER" \
  --user system:kube-controller-manager --out "$DATA_DIR/controller-manager/kubeconfig"
node dist/cmd/tkube.js credentials --cert-dir "$CERT_DIR" --server "$SERVER" \
  --user system:kube-scheduler --out "$DATA_DIR/controller-manager/scheduler.kubeconfig"

set -x
node dist/cmd/controller-manager.js \
  --kubeconfig "$DATA_DIR/controller-manager/kubeconfig" \
  --use-service-account-credentials \
  --scheduler-kubeconfig "$DATA_DIR/controller-manager/scheduler.kubeconfig" \
  --secure-port "$CM_PORT" \
  --bind-address 127.0.0.1 \
  --root-ca-file "$CERT_DIR/ca.crt" \
  --cluster-signing-cert-file "$CERT_DIR/ca.crt" \
  --cluster-signing-key-file "$CERT_DIR/ca.key" \
  $CONTROLLER_MANAGER_FLAGS >"$LOG_DIR/controller-manager.log" 2>&1 &
{ set +x; } 2>/dev/null
PIDS+=($!)

for i in $(seq 1 "$NODES"); do
  name=tkube-node-$i
  dir=$DATA_DIR/nodes/$name
  offset=$(((i - 1) * 100))
  node dist/cmd/tkube.js credentials --cert-dir "$CERT_DIR" --server "$SERVER" \
    --user "system:node:$name" --group system:nodes --out "$dir/kubeconfig"
  set -x
  node dist/cmd/nodeagent.js \
    --kubeconfig "$dir/kubeconfig" \
    --hostname-override "$name" \
    --node-ip 127.0.0.1 \
    --address 127.0.0.1 \
    --port $((10250 + offset)) \
    --read-only-port $((10255 + offset)) \
    --healthz-port $((10248 + offset)) \
    --root-dir "$dir" \
    --cert-dir "$dir/pki" \
    --pod-cidr "10.244.$((i - 1)).0/24" \
    $NODEAGENT_FLAGS >"$LOG_DIR/$name.log" 2>&1 &
  { set +x; } 2>/dev/null
  PIDS+=($!)
done

echo "Waiting for $NODES Ready node(s) ..."
for _ in $(seq 1 300); do
  ready=$(kubectl --kubeconfig "$KUBECONFIG_PATH" get nodes \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null | grep -c True || true)
  if [ "$ready" -ge "$NODES" ]; then break; fi
  sleep 0.2
done
cat <<MSG

tkube is running (logs in $LOG_DIR):

  export KUBECONFIG=$(cd "$(dirname "$KUBECONFIG_PATH")" && pwd)/$(basename "$KUBECONFIG_PATH")
  kubectl get nodes

Press Ctrl-C to stop.
MSG
wait
