"""The policy: guardian.yaml compiled, its rules, the built-in floor, autonomy levels, tool names."""
