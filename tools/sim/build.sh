#!/usr/bin/env bash
# Builds the local cluster's binaries from their Go modules into a cache keyed by versions.
# Prints the bin directory on its last line. A warm cache returns at once.
set -euo pipefail

# Trainer and JobSet are the controllers NVCRE v0.12 installs: `nvcrectl setup init` installs the kubeflow-trainer
# Helm chart 2.2.1, whose JobSet dependency is chart 0.11.0 (charts/kubeflow-trainer/Chart.yaml; Trainer's own
# kustomize manifests pull JobSet v0.11.0 too). Trainer v2.2.1 compiles against the JobSet v0.11.1 Go API, the same
# CRD. The CRDs and webhook manifests below come from these same module versions (copy_assets).
K8S=v1.36.3 STAGING=v0.36.3 ETCD=v3.6.14 KWOK=v0.8.0 JOBSET=v0.11.0 TRAINER=v2.2.1
KEY="k8s-${K8S}_etcd-${ETCD}_kwok-${KWOK}_jobset-${JOBSET}_trainer-${TRAINER}"
CACHE="${CRE_SIM_CACHE:-$HOME/.cache/cre-sim}/$KEY"
BIN="$CACHE/bin"
WANT=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok kwokctl jobset trainer-controller-manager)

ASSETS="$CACHE/assets"
have_all() { for b in "${WANT[@]}"; do [ -x "$BIN/$b" ] || return 1; done; [ -f "$ASSETS/.done" ]; }
if have_all; then echo "$BIN"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS="-trimpath -mod=mod" GOMAXPROCS="${GOMAXPROCS:-2}"
mkdir -p "$BIN" "$CACHE/src"
STAGING_MODS=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api cri-client
  cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
  kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission
  sample-apiserver sample-cli-plugin sample-controller streaming)

build_k8s() {
  local dir="$CACHE/src/k8s"; mkdir -p "$dir"; cd "$dir"
  if [ ! -f go.mod ] || ! grep -q "k8s.io/kubernetes $K8S" go.mod; then
    { echo "module local/k8sbuild"; echo; echo "go 1.26.0"; echo
      for m in "${STAGING_MODS[@]}"; do echo "replace k8s.io/$m => k8s.io/$m $STAGING"; done; } > go.mod
    for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
      go get -tool "k8s.io/kubernetes/cmd/$c@$K8S"
    done
  fi
  local ldf=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf="$ldf -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=36 -X $p.gitTreeState=clean"
  done
  go build -p "$GOMAXPROCS" -ldflags "$ldf -s -w" -o "$BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
}

build_etcd() {
  local dir="$CACHE/src/etcd"; mkdir -p "$dir"; cd "$dir"
  [ -f go.mod ] || { go mod init local/etcdbuild >/dev/null 2>&1; go get -tool "go.etcd.io/etcd/server/v3@$ETCD"; }
  go build -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
}

build_kwok() {
  GOBIN="$BIN" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK"
}

# The proxy refuses the version list of jobset, which `go install pkg@v` needs: build each controller from a
# wrapper module of its own (trainer's newer controller-runtime does not build jobset's own binary).
build_go_main() {  # <wrapper dir> <module@version> <package>
  local dir="$CACHE/src/$1"; mkdir -p "$dir"; cd "$dir"
  if [ ! -f go.mod ]; then
    go mod init "local/$1" >/dev/null 2>&1
    go get -tool "$2"
  fi
  go build -p "$GOMAXPROCS" -ldflags "-s -w" -o "$BIN/" "$3"
}

[ -x "$BIN/etcd" ] || (build_etcd)
{ [ -x "$BIN/kwok" ] && [ -x "$BIN/kwokctl" ]; } || (build_kwok)
[ -x "$BIN/jobset" ] || (build_go_main jobset "sigs.k8s.io/jobset@$JOBSET" sigs.k8s.io/jobset)
[ -x "$BIN/trainer-controller-manager" ] || (build_go_main trainer \
  "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager@$TRAINER" \
  github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager)
{ [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kubectl" ]; } || (build_k8s)
# Stages, CRDs and webhook manifests come from the same module versions as the binaries.
copy_assets() {
  local kwok trainer jobset
  kwok=$(go mod download -json "sigs.k8s.io/kwok@$KWOK" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  trainer=$(go mod download -json "github.com/kubeflow/trainer/v2@$TRAINER" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  jobset=$(go mod download -json "sigs.k8s.io/jobset@$JOBSET" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$ASSETS/stages" "$ASSETS/crds" "$ASSETS/webhooks"
  cp "$kwok/kustomize/stage/node/fast/node-initialize.yaml" \
     "$kwok/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
     "$kwok/kustomize/stage/pod/fast/pod-ready.yaml" "$kwok/kustomize/stage/pod/fast/pod-complete.yaml" \
     "$kwok/kustomize/stage/pod/fast/pod-delete.yaml" "$ASSETS/stages/"
  cp "$jobset/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$trainer"/manifests/base/crds/trainer.kubeflow.org_*.yaml "$ASSETS/crds/"
  cp "$jobset/config/components/webhook/manifests.yaml" "$ASSETS/webhooks/jobset.yaml"
  cp "$trainer/manifests/base/webhook/manifests.yaml" "$ASSETS/webhooks/trainer.yaml"
  chmod -R u+w "$ASSETS"
  touch "$ASSETS/.done"
}
[ -f "$ASSETS/.done" ] || (copy_assets)
have_all || { echo "build incomplete in $BIN" >&2; exit 1; }
echo "$BIN"
