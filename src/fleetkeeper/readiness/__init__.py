"""Failover readiness: what losing a cluster (or a zone, a region) would do, before it happens.

``whatif`` is the pure core — the real scheduler, the taint manager's rules, the default
taint policy and the circuit breaker applied to a copy of the fleet with some clusters
failed; ``capacity`` keeps the books of the room the moved replicas take; ``live`` reads
the fleet from a running control plane; ``assess`` turns a what-if per failure domain into
each binding's ``FailoverReady`` condition, and ``controller`` keeps that condition up to
date on the plane, at the lowest tier; ``replay`` turns the live fleet into a scenario for
a simulated failure (``whatif --simulate``); ``bench`` times a full readiness pass.
"""
