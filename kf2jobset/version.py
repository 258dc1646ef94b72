"""The release, in a module of its own: the package's __init__ is the Python API's front door (a front
end), and the lower layers that print the version (report renderers, the plugin) must not import it."""

__version__ = "0.1.0"
