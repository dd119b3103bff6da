"""The observatory (DESIGN section 8): exact usage and metrics of every job and of the fleet.

Three sources, most exact first: OpenTelemetry from the agent (a loopback OTLP receiver), what
zen sees itself (guard decisions, turns), and the agent's transcripts or rollouts parsed
incrementally. Counting rules and the dated price table live here; `jobs/<id>/metrics.json` is
derived from the timeline and always rebuildable.
"""
