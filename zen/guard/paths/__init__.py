"""Where a path lands: resolution, the path checks, /proc and other processes, zen's own records."""
