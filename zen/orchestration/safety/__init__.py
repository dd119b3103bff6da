"""What keeps automatic work in bounds: autonomy levels and the kill switch, incidents and their controls, the circuit breaker, the guardian's policy as the dashboard edits it."""
