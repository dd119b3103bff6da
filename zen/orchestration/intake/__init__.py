"""Tasks in: `zen dispatch` (checked, then published to the spool) and the spool read into jobs."""
