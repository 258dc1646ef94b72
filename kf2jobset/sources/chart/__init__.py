"""Helm chart templates that render v1 jobs, converted at the source (kf2jobset/sources/chart/source.py)."""
