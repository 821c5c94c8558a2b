"""stub"""

SUFFIXES = (".csv",)
