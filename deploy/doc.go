// Package deploy holds the container image (Dockerfile) and the Kubernetes
// manifests (k8s/) that run yagent as one pod per workspace; its tests keep
// them true to the code: the container's arguments are ones `yagent serve`
// accepts and starts with, the probes are paths the HTTP front answers, the
// plugins sit in the folder the host searches first, and
// the ports, the token file, the user and the workspace agree across the
// image and the manifests. make deploy-check validates the manifests
// against the vendored Kubernetes schemas.
package deploy
