"""Stacks beyond one box: the hosts of stack.yaml, what each one runs, and the gates between them.

`hosts:` (its schema: stackctl/config_hosts.py) names each host, its intranet address and its role
(edge, gpu, ray-worker); `plan_host` turns the config and one host's name into that host's
`HostPlan` (its services, the addresses they bind, nginx's upstreams, Prometheus' federation
targets, the Ray cluster it belongs to).
A stack without `hosts:` is one box, planned exactly as before.
"""

from stackctl.topology.plan import HostPlan, PeerGate, RayPlan, plan_host

__all__ = ["HostPlan", "PeerGate", "RayPlan", "plan_host"]
