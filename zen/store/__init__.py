"""The filesystem adapter: the home directory and every file in it (DESIGN section 2)."""
