"""`python -m evalframe ...` runs the CLI (when the `evalframe` script is not on PATH)."""

from evalframe.cli import main

main()
