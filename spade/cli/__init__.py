"""Command-line entry points: thin layers that parse arguments and call the library."""
