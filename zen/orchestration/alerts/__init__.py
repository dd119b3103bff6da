"""Telling humans: notifications when a job needs them or ends, and the webhook outbox."""
