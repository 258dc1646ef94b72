"""The bodies of the top-level commands (`convert`, `report`, `krm`), one module each; kf2jobset/cli/main.py
declares them (arguments, options, help) and loads a body only when its command runs."""
