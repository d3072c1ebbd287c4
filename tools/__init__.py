"""Development tools: not part of the stackctl package (they need dev-only dependencies)."""
