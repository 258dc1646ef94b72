"""Kubernetes itself: the schemas and their compiled checks, the API server's object and pod rules, the
JobSet admission rules, quantities, CPU amounts, image references and nulls as a CRD stores them. Pure."""
