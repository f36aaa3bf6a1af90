#!/usr/bin/env bash
# antsibull-docs lint-collection-docs over the collection: every plugin's and role's documentation rendered and
# checked (markup, references to our modules and to kubernetes.core's), and the extra docs (docs/docsite).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# kubernetes.core, our dependency, comes with the PyPI ansible bundle inside .venv. antsibull-docs copies a
# dependency that sits inside a git checkout by its tracked files only (none, under the ignored .venv): give it
# a plain copy outside the checkout, and the only one it sees: it picks among the copies by the order of their
# paths, so with sys.path scanned a checkout whose path sorts before /tmp (e.g. CI's) would get the venv's copy.
bundle=$("$ROOT/.venv/bin/python" -c 'import ansible_collections; print(list(ansible_collections.__path__)[0])')
mkdir -p "$work/ansible_collections/kubernetes"
cp -r "$bundle/kubernetes/core" "$work/ansible_collections/kubernetes/core"
cd "$ROOT"
ANSIBLE_COLLECTIONS_PATH="$work" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false PATH="$ROOT/.venv/bin:$PATH" \
  antsibull-docs lint-collection-docs --plugin-docs --check-extra-docs-refs --validate-collection-refs dependent .
