"""Bash as the guardian reads it: the parse and walk, word expansion, option parsing, hosts in text."""
