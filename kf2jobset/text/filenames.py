"""What a file's name says it holds: a manifest, a YAML template, a Markdown page. Names only, no
file is opened (the walk that uses them is kf2jobset/repo/walk.py)."""
from __future__ import annotations

# YAML templates filled in by envsubst (or sed) keep a YAML name with a template suffix:
# `job.yaml-template`, `job.yaml.template`, `job.yaml.tmpl` (and `.yml`); Jinja's `job.yaml.j2`,
# `.yaml.jinja`, `.yaml.jinja2`. They are walked and converted like any manifest, their placeholders
# carried through (envsubst.py, brace_templates.py); one that is not YAML is skipped and listed, never
# failed. Not walked: `.yaml.in` (autoconf/CMake `@VAR@`) and `.tpl` (Helm's partials) — other template
# languages, converted only when named on the command line.
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
TEMPLATE_SUFFIXES = tuple(f"{ext}{suffix}" for ext in (".yaml", ".yml")
                          for suffix in ("-template", ".template", ".tmpl", ".j2", ".jinja", ".jinja2"))
EXTRA_NAMES = ("Kustomization",)
# Markdown docs (fenced YAML blocks, kf2jobset/sources/markdown.py): walked only with --docs; named files always.
DOC_SUFFIXES = (".md", ".markdown")


def is_manifest_name(name: str) -> bool:
    return name.endswith(MANIFEST_SUFFIXES) or name.endswith(TEMPLATE_SUFFIXES) or name in EXTRA_NAMES


def is_doc_name(path: str) -> bool:
    """A Markdown file (kf2jobset/sources/markdown.py converts its fenced YAML blocks)."""
    return path.lower().endswith(DOC_SUFFIXES)


def is_template_name(path: str) -> bool:
    """A YAML file named as a template (`job.yaml-template`, `.yaml.template`, `.yaml.tmpl`)."""
    return path.endswith(TEMPLATE_SUFFIXES)
