"""The command handlers, one module per command family; `dispatch` runs a command's handler."""
