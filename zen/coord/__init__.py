"""The coordinator (DESIGN section 10): many agents on one repository.

Leases on paths of a lane (`coord/<lane>/leases/`), taken explicitly or by the guardian on a
job's first write and enforced in its hook; change and conflict detection across live jobs
(`files.changed`, `coord.overlap`, `coord.conflict`, `base.moved`); and durable webhooks from the
`coord/outbox/` folder. Sits beside orchestration: it reads the home through `zen.store`.
"""
