"""One job from start to end: preflight, handoff, spawn, its turns, control, harvest, land, recover."""
