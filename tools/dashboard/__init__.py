"""The Grafana dashboard, built from code with the dev-only grafana-foundation-sdk
(`python -m tools.dashboard.dashboard` regenerates grafana/dashboards/stackctl.json), and its PromQL."""
