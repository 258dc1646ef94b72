"""The command lines: click commands and their options (`main`, `shared_options`), each command's body in
`commands/`, loaded when the command runs."""
