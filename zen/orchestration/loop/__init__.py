"""`zen supervise`: the loop, starting queued jobs, watching live ones, goals, teams and Ray turns."""
