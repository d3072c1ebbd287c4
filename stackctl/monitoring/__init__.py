"""Monitoring: the Grafana dashboard (built from code, `stackctl.monitoring.dashboard`) and its PromQL."""
