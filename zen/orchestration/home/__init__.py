"""The home's set-up and upkeep: `zen doctor`, the tools it checks, fast setup, `zen gc`."""
