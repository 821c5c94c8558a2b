"""stub"""
SUFFIXES = (".csv",)
