"""Where jobs are held or templated, read and written back: envsubst and program templates, Argo steps,
Katib trials and their ConfigMaps, AppWrappers, jobs held inside other objects, job text in strings,
Markdown pages and Helm chart templates."""
