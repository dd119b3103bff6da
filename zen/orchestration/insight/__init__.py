"""What the fleet's own history says: policy changes replayed over it, its anomalies (issue 38)."""
