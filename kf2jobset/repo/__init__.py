"""Repo mode: manifests converted where they live (--in-place, --out-dir, --check), kustomize
overlays, Helm templates, comment carry-over, and the pre-commit hooks built on them."""
