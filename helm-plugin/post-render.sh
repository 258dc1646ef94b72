#!/bin/sh
# Helm 4 runs this with the rendered release on stdin; its stdout is what Helm installs.
# Helm 4 keeps a post-renderer plugin's stderr to itself (v4.3.1 internal/plugin/runtime_subprocess.go
# collects it and never shows it), so kf2jobset's messages go to Helm's own stderr (our parent's) where
# Linux names it; elsewhere Helm only says that the plugin failed.
if [ -w "/proc/$PPID/fd/2" ]; then
  exec kf2jobset convert - "$@" 2>>"/proc/$PPID/fd/2"
fi
exec kf2jobset convert - "$@"
