"""`python -m evalframe.cli ...` runs the command line."""

from evalframe.cli import main

main()
