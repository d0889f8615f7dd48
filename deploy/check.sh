#!/usr/bin/env bash
# make deploy-check: validate deploy/k8s against the vendored Kubernetes
# schemas (no download), as written and as kustomize renders it, with and
# without the browser component; read deploy/Dockerfile with BuildKit's
# parser and linter; build the image where a Docker engine answers. The
# tools run from deploy/tools, a module of their own, so the main module
# gains no dependency.
set -euo pipefail
cd "$(dirname "$0")"
k8s_version=1.31.0
schemas="$PWD/schemas/{{.NormalizedKubernetesVersion}}-standalone{{.StrictSuffix}}/{{.ResourceKind}}{{.KindSuffix}}.json"
tools="$PWD/tools"
tool() { (cd "$tools" && go tool "$@"); }
validate() {
	tool kubeconform -strict -summary -kubernetes-version "$k8s_version" -schema-location "$schemas" "$@"
}

echo "deploy-check: the manifests under deploy/k8s"
# A kustomization is not a Kubernetes kind: kustomize checks those below.
validate -ignore-filename-pattern 'kustomization\.yaml$' "$PWD/k8s"

echo "deploy-check: kustomize build deploy/k8s"
tool kustomize build "$PWD/k8s" | validate -

echo "deploy-check: kustomize build deploy/k8s with the browser component"
# Beside k8s/: kustomize takes relative paths only.
overlay=$(mktemp -d -p "$PWD" .check-XXXXXX)
trap 'rm -rf "$overlay"' EXIT
cat >"$overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../k8s
components:
  - ../k8s/browser
YAML
rendered=$(tool kustomize build "$overlay")
grep -q 'type: Unconfined' <<<"$rendered" || { echo "deploy-check: the browser component did not reach the container" >&2; exit 1; }
validate - <<<"$rendered"

echo "deploy-check: deploy/Dockerfile through BuildKit's parser and linter"
dockerfile="$PWD/Dockerfile"
(cd "$tools" && go run ./dockerfilecheck "$dockerfile")

if docker info >/dev/null 2>&1; then
	echo "deploy-check: docker build -f deploy/Dockerfile ."
	docker build -f Dockerfile -t yagent:deploy-check ..
else
	echo "deploy-check: image build skipped: no Docker engine answers here (docker info failed)"
fi
